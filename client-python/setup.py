"""Refuses to build without the generated message classes (src/arrayd/v1), with the command that makes them."""
import pathlib

from setuptools import setup

if not (pathlib.Path(__file__).parent / "src" / "arrayd" / "v1" / "common_pb2.py").exists():
    raise SystemExit(
        "arrayd: the message classes in src/arrayd/v1 are generated from proto/ at build time and are missing; "
        "run `./mvnw -q -pl client-python -am package -DskipTests` from the repository root first "
        "(or `PROTOC=/path/to/protoc client-python/build.sh stubs` with protoc 36.x)")

setup()
