package dev.stealing;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The loops, reductions and sorts of {@link ParallelOperations} as a Java caller writes them,
 * called by {@code JavaLoopsSpec}. This file compiling is half the test: {@code Long::sum},
 * {@code Math::max} and {@code (a, b) -> a + b} pick one form with no cast, {@code parallelMap}
 * takes a {@code List<? extends T>} and a {@code Function<? super T, ? extends R>}, and the
 * object sort a {@code Comparator<? super T>}.
 */
final class JavaLoops {
    private JavaLoops() {
    }

    /** The sum of {@code mix(i)} over {@code [from, to)}. */
    static long sumOfMix(StealingDispatcher pool, int from, int to) {
        return pool.parallelReduceToLong(from, to, 0L, JavaLoops::mix, Long::sum);
    }

    /** The largest {@code mix(i)} over {@code [from, to)}, or Long.MIN_VALUE. */
    static long maxOfMix(StealingDispatcher pool, int from, int to) {
        return pool.parallelReduceToLong(from, to, Long.MIN_VALUE, JavaLoops::mix, Math::max);
    }

    /** The mapped value of the last index, through an associative op that is not commutative ("the later one"). */
    static long lastOfMix(StealingDispatcher pool, int from, int to) {
        return pool.parallelReduceToLong(from, to, Long.MIN_VALUE, JavaLoops::mix, (a, b) -> b == Long.MIN_VALUE ? a : b);
    }

    /** A sum of quarters, exact in a double whatever the grouping. */
    static double sumOfQuarters(StealingDispatcher pool, int from, int to) {
        return pool.parallelReduceToDouble(from, to, 0.0, i -> (i & 1023) * 0.25, (a, b) -> a + b);
    }

    /** The largest of {@code mix(i)} as a double. */
    static double maxAsDouble(StealingDispatcher pool, int from, int to) {
        return pool.parallelReduceToDouble(from, to, Double.NEGATIVE_INFINITY, i -> (double) mix(i), Math::max);
    }

    /** Every index of {@code [from, to)} in a list, through the containers' order. */
    static ArrayList<Integer> indices(StealingDispatcher pool, int from, int to) {
        return pool.parallelCollect(from, to, ArrayList::new, ArrayList::add, ArrayList::addAll);
    }

    /** How many of {@code data} fall in each of 256 buckets (by their low byte). */
    static long[] histogram(StealingDispatcher pool, int[] data) {
        return pool.parallelCollect(0, data.length, () -> new long[256], (h, i) -> h[data[i] & 0xff]++, (h, other) -> {
            for (int b = 0; b < 256; b++) h[b] += other[b];
        });
    }

    /** The lengths of the texts (-1 for null): {@code List<? extends CharSequence>} in, a function of a supertype accepted, {@code List<Integer>} out. */
    static List<Integer> lengths(StealingDispatcher pool, List<? extends CharSequence> texts) {
        List<Integer> viaSuper = pool.parallelMap(texts, (Object o) -> o == null ? -1 : o.toString().length());
        List<Integer> viaRef = pool.parallelMap(texts, (CharSequence s) -> s == null ? -1 : s.length());
        if (!viaSuper.equals(viaRef)) throw new AssertionError("the two forms differ");
        return viaRef;
    }

    /** Any mapping, as a Java caller passes it. */
    static <T, R> List<R> map(StealingDispatcher pool, List<? extends T> list, java.util.function.Function<? super T, ? extends R> f) {
        return pool.parallelMap(list, f);
    }

    /** Sorts records by key with a comparator of a supertype ({@code Comparator<Object>} would do too). */
    static void sortByKey(StealingDispatcher pool, Keyed[] records) {
        Comparator<Keyed> byKey = Comparator.comparingInt(Keyed::key);
        pool.parallelSort(records, byKey);
    }

    /** A record with a key to sort by and its place in the input. */
    record Keyed(int key, int place) {
    }

    /** A cheap function of an index, spread over all of a long's bits. */
    static long mix(int i) {
        long x = i * 0x9E3779B97F4A7C15L;
        return x ^ (x >>> 29);
    }

    /** The message of each NullPointerException from a null argument to the new loops, or what happened instead. */
    static List<String> nullMessages(StealingDispatcher pool) {
        List<String> messages = new ArrayList<>();
        messages.add(npe(() -> pool.parallelReduceToLong(0, 10, 0L, null, Long::sum)));
        messages.add(npe(() -> pool.parallelReduceToLong(0, 10, 0L, i -> i, null)));
        messages.add(npe(() -> pool.parallelReduceToDouble(0, 10, 0.0, null, Double::sum)));
        messages.add(npe(() -> pool.parallelReduceToDouble(0, 10, 0.0, i -> i, null)));
        messages.add(npe(() -> pool.parallelCollect(0, 10, null, (List<Integer> l, int i) -> l.add(i), List::addAll)));
        messages.add(npe(() -> pool.parallelCollect(0, 10, ArrayList<Integer>::new, null, List::addAll)));
        messages.add(npe(() -> pool.parallelCollect(0, 10, ArrayList<Integer>::new, ArrayList::add, null)));
        messages.add(npe(() -> pool.parallelMap(null, Object::toString)));
        messages.add(npe(() -> pool.parallelMap(List.of(1), null)));
        messages.add(npe(() -> pool.parallelSort((String[]) null, Comparator.naturalOrder())));
        messages.add(npe(() -> pool.parallelSort(new String[] {"b", "a"}, null)));
        messages.add(npe(() -> pool.parallelSort((double[]) null)));
        return messages;
    }

    private static String npe(Runnable call) {
        try {
            call.run();
            return "no NullPointerException";
        } catch (NullPointerException e) {
            return String.valueOf(e.getMessage());
        } catch (RuntimeException e) {
            return "threw " + e;
        }
    }
}
