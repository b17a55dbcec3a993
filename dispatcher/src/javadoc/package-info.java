/**
 * A work-stealing thread pool: a {@link dev.stealing.StealingDispatcher} is both a Kotlin
 * coroutine dispatcher and, through {@link dev.stealing.StealingDispatcher#getExecutor()}, a
 * {@link java.util.concurrent.ScheduledExecutorService} whose tasks are
 * {@link dev.stealing.ForkedTask}s.
 *
 * <p>From Java:
 * <pre>
 * StealingDispatcher shared = StealingDispatcher.getShared();       // the shared pool
 * try (StealingDispatcher pool = new StealingDispatcher(4, "compute",
 *         StealingOptions.DEFAULT.withKeepAlive(Duration.ofSeconds(30)))) {
 *     ForkedTask&lt;Integer&gt; left = pool.fork(() -&gt; 20);
 *     int answer = pool.getExecutor().submit(() -&gt; 22).join() + left.join();
 * }
 * </pre>
 *
 * <p>These pages show the library as Java code sees it. Kotlin-only parts are left out: the
 * suspend functions {@code blocking}, {@code forkJoin}, {@code forkJoinAll},
 * {@code awaitInline}, {@code parallelForEach}, {@code parallelMap}, {@code parallelFold},
 * {@code parallelSort} and {@code parallelSortWith} (the Java forms of the loops and sorts are
 * methods of the pool), the companion objects (their members that Java may call are the static
 * methods of {@link dev.stealing.StealingDispatcher} and {@link dev.stealing.ForkedTask}),
 * the Kotlin-Duration overloads of {@link dev.stealing.StealingOptions}, and the hooks that
 * kotlinx.coroutines calls on a dispatcher ({@code dispatch}, {@code isDispatchNeeded},
 * {@code scheduleResumeAfterDelay}, {@code invokeOnTimeout}). Their documentation is in the
 * sources jar, which a Kotlin IDE reads.
 */
package dev.stealing;
