{{/*
Named templates of the arrayd chart. An application chart that runs arrayd as a sidecar depends on this
chart (mode: sidecar) and includes "arrayd.sidecar.container" in its pod's initContainers and
"arrayd.sidecar.volumes" in its volumes, with the arrayd chart's context:
  {{- include "arrayd.sidecar.container" (dict "Values" .Values.arrayd "Release" .Release "Chart" (dict "AppVersion" "<arrayd's appVersion>")) | nindent 8 }}
deploy/helm/example-app does exactly that.
*/}}

{{/* The chart's name, or nameOverride. */}}
{{- define "arrayd.name" -}}
{{- default "arrayd" .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-arrayd (or the release name when it already says arrayd), or fullnameOverride. */}}
{{- define "arrayd.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default "arrayd" .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "arrayd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "arrayd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "arrayd.labels" -}}
{{ include "arrayd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | default "Helm" }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* The labels of the pods the daemon runs in: its own (standalone), or the application's (sidecar). */}}
{{- define "arrayd.podSelector" -}}
{{- if eq .Values.mode "sidecar" -}}
{{- required "sidecar.podSelector: the labels of the application's pods that run arrayd" .Values.sidecar.podSelector | toYaml -}}
{{- else -}}
{{- include "arrayd.selectorLabels" . -}}
{{- end -}}
{{- end -}}

{{- define "arrayd.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* Whether the daemon also listens on a Unix socket in a directory its pod shares (sidecar mode). */}}
{{- define "arrayd.unixSocket" -}}
{{- if and (eq .Values.mode "sidecar") .Values.arrayd.unixSocket.enabled -}}true{{- end -}}
{{- end -}}

{{/* Whether calls are authenticated (a token file or client certificates): then the pod IP needs no insecure. */}}
{{- define "arrayd.authenticated" -}}
{{- if or .Values.auth.existingSecret (and .Values.tls.secretName .Values.tls.clientCaKey) -}}true{{- end -}}
{{- end -}}

{{/* The config file, `key = value` per line (docs/configuration.md). */}}
{{- define "arrayd.config" -}}
# written by the arrayd chart; `arrayd serve --config /etc/arrayd/config/arrayd.conf`
bind = {{ .Values.arrayd.bind }}
{{- if .Values.arrayd.metricsBind }}
metrics-bind = {{ .Values.arrayd.metricsBind }}
{{- end }}
{{- if not (include "arrayd.authenticated" .) }}
# no authentication configured: the NetworkPolicy is what keeps other pods off the gRPC port
insecure = true
{{- end }}
port = {{ .Values.arrayd.grpcPort }}
metrics-port = {{ .Values.arrayd.metricsPort }}
devices = {{ .Values.arrayd.devices }}
cpu-memory = {{ .Values.arrayd.cpuMemory }}
shutdown-grace = {{ .Values.arrayd.shutdownGrace }}
log-format = {{ .Values.arrayd.logFormat }}
log-level = {{ .Values.arrayd.logLevel }}
allow-native-source = {{ .Values.arrayd.allowNativeSource }}
max-message-bytes = {{ .Values.arrayd.maxMessageBytes }}
metrics-client-limit = {{ .Values.arrayd.metricsClientLimit }}
metrics-kernel-limit = {{ .Values.arrayd.metricsKernelLimit }}
{{- if include "arrayd.unixSocket" . }}
# the application's way in, and the shared-memory regions' (their pages count against this container's limit)
uds = /run/arrayd/arrayd.sock
region-memory = {{ .Values.arrayd.unixSocket.regionMemory }}
{{- end }}
{{- if .Values.auth.existingSecret }}
auth-tokens = /etc/arrayd/auth/{{ .Values.auth.tokensKey }}
{{- end }}
{{- if .Values.tls.secretName }}
tls-cert = /etc/arrayd/tls/tls.crt
tls-key = /etc/arrayd/tls/tls.key
{{- if .Values.tls.clientCaKey }}
tls-client-ca = /etc/arrayd/tls/{{ .Values.tls.clientCaKey }}
{{- end }}
{{- end }}
{{- $peers := include "arrayd.peers" . }}
{{- if $peers }}
# peer daemons (docs/operations.md, "Peers"){{ if eq .Values.mode "pool" }}; a member skips its own entry (named as its host){{ end }}
peers = {{ $peers }}
{{- end }}
{{- if .Values.peerToken.existingSecret }}
peer-token-file = /etc/arrayd/peer/{{ .Values.peerToken.key }}
{{- end }}
{{- if .Values.peerTls.caSecret }}
peer-tls-ca = /etc/arrayd/peer-tls/{{ .Values.peerTls.caKey }}
{{- end }}
peer-bulk-port = {{ .Values.arrayd.peerBulkPort }}
{{- range $key, $value := .Values.arrayd.extraConfig }}
{{ $key }} = {{ $value }}
{{- end }}
{{- end -}}

{{/*
The members of the pool (mode pool) as a peers list, `<pod>=<pod>.<headless service>.<namespace>.svc:<port>`
each, or with pool.discovery dns the headless Service itself, `dns:///<headless service>.<namespace>.svc:<port>`:
what the members list of each other, and what an application's sidecar sets as arrayd.peers.
*/}}
{{- define "arrayd.pool.peers" -}}
{{- $name := include "arrayd.fullname" . -}}
{{- if eq (.Values.pool.discovery | default "list") "dns" -}}
{{- printf "dns:///%s-pool.%s.svc:%v" $name .Release.Namespace .Values.arrayd.grpcPort -}}
{{- else -}}
{{- $members := list -}}
{{- range $i := until (int .Values.pool.replicas) -}}
{{- $pod := printf "%s-%d" $name $i -}}
{{- $members = append $members (printf "%s=%s.%s-pool.%s.svc:%v" $pod $pod $name $.Release.Namespace $.Values.arrayd.grpcPort) -}}
{{- end -}}
{{- join "," $members -}}
{{- end -}}
{{- end -}}

{{/* The peers line: the pool's members in mode pool, then arrayd.peers. */}}
{{- define "arrayd.peers" -}}
{{- $all := list -}}
{{- if eq .Values.mode "pool" -}}
{{- $all = append $all (include "arrayd.pool.peers" .) -}}
{{- end -}}
{{- if .Values.arrayd.peers -}}
{{- $all = append $all .Values.arrayd.peers -}}
{{- end -}}
{{- join "," $all -}}
{{- end -}}

{{/* Restarts the pods when the config file changes (the daemon reads it at start). */}}
{{- define "arrayd.checksum" -}}
checksum/arrayd-config: {{ include "arrayd.config" . | sha256sum }}
{{- end -}}

{{/*
The daemon's container. In a pod of its own it is the main container; beside an application it is a
native sidecar (an init container with restartPolicy Always: started, and ready, before the application,
stopped after it).
*/}}
{{- define "arrayd.container" -}}
- name: arrayd
  image: {{ include "arrayd.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  {{- if eq .Values.mode "sidecar" }}
  restartPolicy: Always
  {{- end }}
  args: ["serve", "--config", "/etc/arrayd/config/arrayd.conf"]
  env:
    - name: JDK_JAVA_OPTIONS
      value: {{ .Values.arrayd.javaOptions | quote }}
  ports:
    - name: grpc
      containerPort: {{ .Values.arrayd.grpcPort }}
    - name: metrics
      containerPort: {{ .Values.arrayd.metricsPort }}
    {{- if and (eq .Values.mode "pool") (ge (int .Values.arrayd.peerBulkPort) 1) (not .Values.tls.secretName) }}
    - name: bulk
      containerPort: {{ .Values.arrayd.peerBulkPort }}
    {{- end }}
  startupProbe:
    grpc:
      port: {{ .Values.arrayd.grpcPort }}
      service: {{ .Values.probes.service | quote }}
    periodSeconds: 2
    timeoutSeconds: 2
    failureThreshold: 60
  readinessProbe:
    grpc:
      port: {{ .Values.arrayd.grpcPort }}
      service: {{ .Values.probes.service | quote }}
    periodSeconds: 5
    timeoutSeconds: 2
    failureThreshold: 2
  livenessProbe:
    # NOT_SERVING during a drain as well: 6 x 10 s outlasts the termination grace period
    grpc:
      port: {{ .Values.arrayd.grpcPort }}
      service: {{ .Values.probes.service | quote }}
    periodSeconds: 10
    timeoutSeconds: 5
    failureThreshold: 6
  resources:
    {{- if eq .Values.mode "pool" }}
    {{- $gpus := dict .Values.pool.gpuResource (toString .Values.pool.gpusPerPod) }}
    requests:
      {{- toYaml (merge (dict) $gpus .Values.resources.requests) | nindent 6 }}
    limits:
      {{- toYaml (merge (dict) $gpus .Values.resources.limits) | nindent 6 }}
    {{- else }}
    {{- toYaml .Values.resources | nindent 4 }}
    {{- end }}
  securityContext:
    allowPrivilegeEscalation: false
    readOnlyRootFilesystem: true
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    capabilities:
      drop: ["ALL"]
  volumeMounts:
    - name: arrayd-config
      mountPath: /etc/arrayd/config
      readOnly: true
    {{- if .Values.auth.existingSecret }}
    - name: arrayd-auth
      mountPath: /etc/arrayd/auth
      readOnly: true
    {{- end }}
    {{- if .Values.tls.secretName }}
    - name: arrayd-tls
      mountPath: /etc/arrayd/tls
      readOnly: true
    {{- end }}
    {{- if .Values.peerToken.existingSecret }}
    - name: arrayd-peer-token
      mountPath: /etc/arrayd/peer
      readOnly: true
    {{- end }}
    {{- if .Values.peerTls.caSecret }}
    - name: arrayd-peer-tls
      mountPath: /etc/arrayd/peer-tls
      readOnly: true
    {{- end }}
    - name: arrayd-tmp
      mountPath: /tmp
    {{- if include "arrayd.unixSocket" . }}
    - name: arrayd-socket
      mountPath: /run/arrayd
    {{- end }}
{{- end -}}

{{/* The volumes the container mounts. */}}
{{- define "arrayd.volumes" -}}
- name: arrayd-config
  configMap:
    name: {{ include "arrayd.fullname" . }}-config
{{- if .Values.auth.existingSecret }}
- name: arrayd-auth
  secret:
    secretName: {{ .Values.auth.existingSecret }}
    defaultMode: 0440
{{- end }}
{{- if .Values.tls.secretName }}
- name: arrayd-tls
  secret:
    secretName: {{ .Values.tls.secretName }}
    defaultMode: 0440
{{- end }}
{{- if .Values.peerToken.existingSecret }}
- name: arrayd-peer-token
  secret:
    secretName: {{ .Values.peerToken.existingSecret }}
    defaultMode: 0440
{{- end }}
{{- if .Values.peerTls.caSecret }}
- name: arrayd-peer-tls
  secret:
    secretName: {{ .Values.peerTls.caSecret }}
    defaultMode: 0440
{{- end }}
- name: arrayd-tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- if include "arrayd.unixSocket" . }}
# the sockets only (regions are memfds, not files): tmpfs, a few bytes
- name: arrayd-socket
  emptyDir:
    medium: Memory
    sizeLimit: 1Mi
{{- end }}
{{- end -}}

{{/* For an application chart: the sidecar container, given the arrayd chart's context (see the top). */}}
{{- define "arrayd.sidecar.container" -}}
{{- include "arrayd.container" (merge (dict "Values" (merge (dict "mode" "sidecar") .Values)) .) -}}
{{- end -}}

{{- define "arrayd.sidecar.volumes" -}}
{{- include "arrayd.volumes" . -}}
{{- end -}}

{{/* For the application's container: the mount of the sockets' directory (empty without the Unix socket). */}}
{{- define "arrayd.sidecar.clientMounts" -}}
{{- if include "arrayd.unixSocket" (merge (dict "Values" (merge (dict "mode" "sidecar") .Values)) .) -}}
- name: arrayd-socket
  mountPath: /run/arrayd
{{- end -}}
{{- end -}}

{{/* For the application: the daemon's address, its Unix socket when there is one, else loopback TCP. */}}
{{- define "arrayd.sidecar.address" -}}
{{- if include "arrayd.unixSocket" (merge (dict "Values" (merge (dict "mode" "sidecar") .Values)) .) -}}
unix:///run/arrayd/arrayd.sock
{{- else -}}
127.0.0.1:{{ .Values.arrayd.grpcPort }}
{{- end -}}
{{- end -}}

{{/* Pod annotations: the config checksum, and Prometheus' scrape annotations when asked for. */}}
{{- define "arrayd.podAnnotations" -}}
{{ include "arrayd.checksum" . }}
{{- if .Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .Values.arrayd.metricsPort | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- end -}}
