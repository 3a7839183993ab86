import CadenceCore
import Testing

/// Drives the fake display on virtual time through Cadence's public API only.
@Suite struct PacingTests {
    /// One frame renders 1.5 refreshes past its deadline: exactly two stale refreshes in one
    /// drop event, blamed on rendering; every other frame on time.
    @Test func aLateFrameCostsExactlyTwoRefreshes() throws {
        let display = FakeDisplay(refreshHz: 60)
        let link = DisplayLink(display: display) { update in
            if update.callbackIndex == 30 {
                let overrun = update.deadline.advanced(by: .milliseconds(25))
                display.spin(until: overrun.nanoseconds)
            }
            update.drawable.present()
        }
        let s = try link.run(for: .seconds(2)).summary
        #expect(s.droppedRefreshes == 2)
        #expect(s.dropEvents == 1)
        #expect(s.late == 1)
        #expect(s.causes == ["render-late": 1])
    }

    /// With three frames in the pipeline, a frame that asks to be shown "as soon as possible"
    /// is due at the vblank the frame before it waits for: that one is discarded and its
    /// presented handler sees presentedTime zero.
    @Test func aDiscardedDrawableIsNeverPresented() throws {
        var times: [UInt64: DisplayInstant] = [:]
        let link = DisplayLink(display: FakeDisplay(refreshHz: 60), preferredFrameLatency: 3) { update in
            let drawable = update.drawable
            drawable.addPresentedHandler { times[$0.drawableID] = $0.presentedTime }
            if update.callbackIndex == 11 {
                drawable.present(at: update.timestamp)
            } else {
                drawable.present()
            }
        }
        let s = try link.run(for: .seconds(1)).summary
        #expect(s.discarded == 1)
        #expect(times[11] == .zero)
        #expect(times.filter { $0.value == .zero }.count == 1)
        #expect(times[12]! > times[10]!)
    }
}
