/**
 * Stealing Dispatcher: a work-stealing coroutine dispatcher and fork/join executor. Only the
 * API package is exported; the engine's packages are in the module but closed to its users.
 *
 * <p>kotlinc compiles the Kotlin sources first; javac then compiles this file alone, against
 * the classes kotlinc wrote (the module's packages are whichever those are). Neither checks
 * that the Kotlin code uses only the modules required here: ModularConsumerSpec does, with
 * jdeps, and runs a modular application against the module.
 */
module dev.stealing {
    // The API is made of their types (function types, kotlin.time.Duration, the dispatcher's
    // kotlinx supertypes), so a module that reads this one reads them too.
    requires transitive kotlin.stdlib;
    requires transitive kotlinx.coroutines.core;
    // The pool's JFR events, which are not part of the API.
    requires jdk.jfr;

    // Optional, each for one feature. context-propagation is looked up by name when its option
    // is on, and the library then reads it from the module graph or the class path alike
    // (isContextPropagationPresent).
    // StealingOptions.propagateContext:
    requires static context.propagation;
    // StealingMetrics. Not transitive although its API is made of Micrometer's types: javac
    // would then demand micrometer.core on the module path of every module that reads this one.
    requires static micrometer.core;
    // StealingOptions.pinThreads needs net.openhft:affinity, which has no module name of its
    // own: CpuPinning calls it by reflection, so no module named after its jar file is required.

    exports dev.stealing;
}
