package dev.stealing.samples

import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import java.util.Locale
import java.util.SplittableRandom

/**
 * Word frequencies of a large text: generates 5M words of deterministic pseudo-random text
 * (sentences over a vocabulary of 4,000 made-up words drawn with a Zipf distribution, so a few
 * words are very common and most are rare, as in real text), cuts it into 256 chunks at word
 * boundaries, and counts the words of each chunk in parallel. Fan-out and fan-in are one tree:
 * a range of chunks is split in two, the left half counted in an `async` child, the right half
 * here, then the smaller of the two maps merged into the larger, so merging runs in parallel too.
 * Checks the counts against a sequential count and the total against the words generated,
 * prints the 10 most frequent words, and compares `StealingDispatcher` (with `awaitInline` and
 * plain `await`) with `Dispatchers.Default`.
 *
 * Run: `mvn -q -pl samples -am compile exec:java -Dexec.mainClass=dev.stealing.samples.WordFrequencyKt`
 */
fun main() {
    val vocabulary = makeVocabulary(size = 4_000, SplittableRandom(7))
    val words = 5_000_000
    val text = makeText(vocabulary, words, SplittableRandom(42))
    val counter = WordCounter(text, chunks = 256)
    val expected = counter.countSequential()
    val total = expected.values.sumOf { it.n.toLong() }
    if (total != words.toLong()) fail("sequential count found $total words, expected $words")
    println("word frequencies: %,d words (%,d distinct) in %.1f MB of text, %d chunks, %s"
        .format(total, expected.size, text.length / 1e6, counter.chunks, roundsNote()))
    compareDispatchers(
        sequential = "sequential, one thread" to { counter.countSequential() },
        check = { counts -> difference(counts, expected) },
    ) { inline -> counter.countParallel(inline) }

    val top = expected.entries.sortedByDescending { it.value.n }.take(10)
    println("top 10 words:")
    for ((rank, e) in top.withIndex()) {
        println("%4d. %-12s %,9d  %5.2f%%".format(rank + 1, e.key, e.value.n, 100.0 * e.value.n / total))
    }
    val asDrawn = top.map { it.key } == vocabulary.take(10)
    println("checked: every count equal to the sequential one, %,d words in total; top 10 in Zipf rank order: %s"
        .format(total, if (asDrawn) "yes" else "no"))
}

/** A mutable count, so that counting a word allocates nothing but the word. */
private class Count(var n: Int)

/** Counts the words (runs of ASCII letters, lower-cased) of [text], cut into [chunks] pieces. */
private class WordCounter(private val text: String, val chunks: Int) {
    /** Chunk k is text[bounds[k], bounds[k + 1]); every bound is moved forward to a word boundary. */
    private val bounds = IntArray(chunks + 1) { k ->
        var at = (text.length.toLong() * k / chunks).toInt()
        while (at in 1 until text.length && isLetter(text[at - 1]) && isLetter(text[at])) at++
        at
    }

    fun countSequential(): HashMap<String, Count> = countRange(0, text.length)

    suspend fun countParallel(inline: Boolean): HashMap<String, Count> = countChunks(0, bounds.size - 1, inline)

    /** Counts chunks [lo, hi): the left half in a child, the right half here, then merges. */
    private suspend fun countChunks(lo: Int, hi: Int, inline: Boolean): HashMap<String, Count> {
        if (hi - lo == 1) return countRange(bounds[lo], bounds[hi])
        val mid = (lo + hi) ushr 1
        return coroutineScope {
            val left = async { countChunks(lo, mid, inline) }
            val right = countChunks(mid, hi, inline)
            merge(left.awaitWith(inline), right)
        }
    }

    private fun countRange(from: Int, to: Int): HashMap<String, Count> {
        val counts = HashMap<String, Count>(8_192)
        var i = from
        while (i < to) {
            while (i < to && !isLetter(text[i])) i++
            if (i == to) break
            val start = i
            var upper = false
            while (i < to && isLetter(text[i])) {
                if (text[i] <= 'Z') upper = true
                i++
            }
            var word = text.substring(start, i)
            if (upper) word = word.lowercase(Locale.ROOT)
            val count = counts[word]
            if (count == null) counts[word] = Count(1) else count.n++
        }
        return counts
    }

    /** Moves the counts of the smaller map into the larger one and returns that. */
    private fun merge(a: HashMap<String, Count>, b: HashMap<String, Count>): HashMap<String, Count> {
        val (into, from) = if (a.size >= b.size) a to b else b to a
        for ((word, count) in from) {
            val existing = into.putIfAbsent(word, count)
            if (existing != null) existing.n += count.n
        }
        return into
    }

    private fun isLetter(c: Char) = c in 'a'..'z' || c in 'A'..'Z'
}

/** Null if [actual] has the same words with the same counts as [expected], else the first difference. */
private fun difference(actual: Map<String, Count>, expected: Map<String, Count>): String? {
    for ((word, count) in expected) {
        val n = actual[word]?.n ?: 0
        if (n != count.n) return "'$word' counted $n times, expected ${count.n}"
    }
    if (actual.size != expected.size) return "${actual.size} distinct words, expected ${expected.size}"
    return null
}

/**
 * [size] distinct made-up words of one to four syllables, shortest first: index 0 is the most
 * frequent word of the text, as short words are the common ones in real languages.
 */
private fun makeVocabulary(size: Int, rnd: SplittableRandom): List<String> {
    val onsets = listOf("b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "st", "tr", "br", "sh", "th")
    val vowels = listOf("a", "e", "i", "o", "u", "ai", "ea", "ou")
    val codas = listOf("", "", "", "n", "r", "s", "t", "l")
    val words = LinkedHashSet<String>()
    while (words.size < size) {
        val syllables = 1 + minOf(rnd.nextInt(4), rnd.nextInt(4)) // one and two syllables are the most likely
        words += buildString {
            repeat(syllables) {
                append(onsets[rnd.nextInt(onsets.size)]).append(vowels[rnd.nextInt(vowels.size)]).append(codas[rnd.nextInt(codas.size)])
            }
        }
    }
    return words.sortedBy { it.length } // stable: words of one length stay in their random order
}

/**
 * [words] words drawn from [vocabulary] with Zipf's law (the word of rank k with probability
 * proportional to 1/k), in sentences of 4 to 20 words: the first capitalised, commas now and
 * then, a full stop at the end, a paragraph break after every few sentences.
 */
private fun makeText(vocabulary: List<String>, words: Int, rnd: SplittableRandom): String {
    val cumulative = DoubleArray(vocabulary.size)
    var sum = 0.0
    for (k in vocabulary.indices) {
        sum += 1.0 / (k + 1)
        cumulative[k] = sum
    }
    val text = StringBuilder(words * 8)
    var left = words
    while (left > 0) {
        val length = minOf(left, 4 + rnd.nextInt(17))
        for (w in 0 until length) {
            var k = java.util.Arrays.binarySearch(cumulative, rnd.nextDouble() * sum)
            if (k < 0) k = -k - 1
            val word = vocabulary[minOf(k, vocabulary.size - 1)]
            if (w == 0) text.append(word[0].uppercaseChar()).append(word, 1, word.length) else text.append(word)
            text.append(if (w == length - 1) "." else if (rnd.nextInt(8) == 0) ", " else " ")
        }
        text.append(if (rnd.nextInt(5) == 0) "\n\n" else " ")
        left -= length
    }
    return text.toString()
}
