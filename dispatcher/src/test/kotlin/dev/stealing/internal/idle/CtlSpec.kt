package dev.stealing.internal.idle

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.shouldBe

class CtlSpec : FunSpec({
    test("the control word's fields do not overlap and cover 64 bits") {
        val masks = listOf(Ctl.TOP_MASK, Ctl.SEARCHING_MASK, Ctl.LIVE_MASK, Ctl.ACTIVE_MASK, Ctl.VERSION_MASK)
        for (i in masks.indices) for (j in masks.indices) if (i != j) (masks[i] and masks[j]) shouldBe 0L
        masks.fold(0L) { acc, m -> acc or m } shouldBe -1L
    }

    test("counts have room for twice the thread cap (transient over-counts)") {
        (2 * Ctl.MAX_THREADS + 1) shouldBeLessThan (Ctl.FIELD_MASK.toInt() + 1)
    }

    test("accessors read back what was packed, and withTop bumps only the version") {
        val c = (5L shl Ctl.TOP_SHIFT) or (3L shl Ctl.SEARCHING_SHIFT) or (7L shl Ctl.LIVE_SHIFT) or
            (2L shl Ctl.ACTIVE_SHIFT) or Ctl.VERSION_MASK
        Ctl.top(c) shouldBe 5
        Ctl.searching(c) shouldBe 3
        Ctl.live(c) shouldBe 7
        Ctl.active(c) shouldBe 2
        Ctl.version(c) shouldBe 0xFFFF
        val d = Ctl.withTop(c, 9)
        Ctl.top(d) shouldBe 9
        Ctl.searching(d) shouldBe 3
        Ctl.live(d) shouldBe 7
        Ctl.active(d) shouldBe 2
        Ctl.version(d) shouldBe 0 // wrapped without carrying out of the word
        Ctl.searching(d + Ctl.SEARCHING_ONE) shouldBe 4
        Ctl.live(d + Ctl.LIVE_ONE) shouldBe 8
        Ctl.active(d - Ctl.ACTIVE_ONE) shouldBe 1
    }
})
