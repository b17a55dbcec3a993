package dev.stealing.project;

import dev.stealing.internal.queue.WorkDeque;
import java.util.List;

/** JavaViewSpec's self-check: one member of each kind the spec must find, and one it must not. */
public class JavaViewProbe {
    /** A name as Kotlin gives an internal member. */
    public void leak$dispatcher() {}

    /** An engine type in a signature. */
    public WorkDeque deque() { return null; }

    /** A raw generic type. */
    @SuppressWarnings("rawtypes")
    public List raw() { return null; }

    /** Fine: a parameterized type. */
    public List<String> fine() { return null; }
}
