import PropertyBased
import Testing

/// Issue 23's first edge as a property: `observe --verify crc` over the saved vkms trace moved
/// any number of vblanks on (modulo 2³², as the kernel's 32-bit counters are), with the CRC
/// lines handed over as the kernel's 32-bit frames, gives the verdicts of the trace as it is:
/// far from the wrap, and with the wrap anywhere in the trace.
@Suite struct ObserveWrapPropertyTests {
    @Test func verdictsDoNotDependOnWhereTheCounterWraps() async {
        // The trace's vblanks run from 71 to 196: near the wrap, it falls inside them.
        let input = zip(Gen.int(in: 0...1), Gen.int(in: 0...((1 << 32) - 72)), Gen.int(in: 72...260))
        await propertyCheck(count: 40, input: input) { nearWrap, far, before in
            let offset = UInt64(nearWrap == 1 ? (1 << 32) - before : far)
            try ObserveContentTests.expectSameVerdicts(offset: offset)
        }
    }
}
