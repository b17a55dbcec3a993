/**
 * A Java application that uses Stealing Dispatcher as a named module: compiled and run on the
 * module path by ModularConsumerSpec. It reads only what the library exports.
 */
module com.example.consumer {
    requires dev.stealing;
    // Only to record the pool's JFR events; the library's own dependency on it is not transitive.
    requires jdk.jfr;
}
