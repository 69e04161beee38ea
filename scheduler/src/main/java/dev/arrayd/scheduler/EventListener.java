package dev.arrayd.scheduler;

/** Told once when an event completes or fails. Runs on the completing thread: be fast, never throw. */
@FunctionalInterface
public interface EventListener {

    void onEvent(Event event);
}
