package dev.stealing

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

class CtlSpec : FunSpec({
    test("the control word's fields do not overlap and cover 64 bits") {
        val masks = listOf(Ctl.TOP_MASK, Ctl.SEARCHING_MASK, Ctl.STARTED_MASK, Ctl.VERSION_MASK)
        for (i in masks.indices) for (j in masks.indices) if (i != j) (masks[i] and masks[j]) shouldBe 0L
        masks.fold(0L) { acc, m -> acc or m } shouldBe -1L
    }

    test("accessors read back what was packed, and withTop bumps only the version") {
        val c = (5L shl Ctl.TOP_SHIFT) or (3L shl Ctl.SEARCHING_SHIFT) or (7L shl Ctl.STARTED_SHIFT) or
            (Ctl.FIELD_MASK shl Ctl.VERSION_SHIFT)
        Ctl.top(c) shouldBe 5
        Ctl.searching(c) shouldBe 3
        Ctl.started(c) shouldBe 7
        Ctl.version(c) shouldBe Ctl.FIELD_MASK.toInt()
        val d = Ctl.withTop(c, 9)
        Ctl.top(d) shouldBe 9
        Ctl.searching(d) shouldBe 3
        Ctl.started(d) shouldBe 7
        Ctl.version(d) shouldBe 0 // wrapped without carrying out of the word
        Ctl.searching(d + Ctl.SEARCHING_ONE) shouldBe 4
        Ctl.started(d + Ctl.STARTED_ONE) shouldBe 8
    }
})
