import Testing
import CadenceCore

/// The public, Apple-shaped API: a link on a display, drawables, presented handlers,
/// `run(for:)` (sync and async), `updates`, errors from the callback.
@Suite struct DisplayLinkAPITests {
    struct Boom: Error, Equatable {}

    @Test func linkPresentsDrawablesAtItsRateAndReportsPresentedTimes() throws {
        let display = FakeDisplay(refreshHz: 120, width: 64, height: 32)
        var shown: [(UInt64, DisplayInstant)] = []
        let link = DisplayLink(display: display, preferredFrameRateRange: .init(minimum: 30, maximum: 120, preferred: 60)) { update in
            let d = update.drawable
            #expect(d.canvas.width == 64 && d.canvas.height == 32)
            // CADisplayLink: duration is a frame at the display's maximum rate (120 Hz), and
            // targetTimestamp − timestamp the link's actual frame duration (60 Hz).
            #expect(update.duration == .nanoseconds(8_333_333))
            #expect(update.timestamp.duration(to: update.targetTimestamp) == .nanoseconds(16_666_667))
            d.addPresentedHandler { shown.append(($0.drawableID, $0.presentedTime)) }
            d.present()
        }
        let result = try link.run(for: .seconds(1))
        #expect(result.summary.effectiveRateHz == 60)
        #expect(result.summary.droppedRefreshes == 0)
        #expect(result.summary.presented == shown.count)
        #expect(shown.count >= 59 && shown.count <= 61)
        #expect(shown.map(\.0) == Array(1...UInt64(shown.count)))
        for (a, b) in zip(shown, shown.dropFirst()) {
            // Two refreshes of 120 Hz, from the kernel-style vblank timestamps.
            let gap = a.1.duration(to: b.1)
            #expect(gap >= .nanoseconds(16_666_666) && gap <= .nanoseconds(16_666_667))
        }
    }

    @Test func callbackErrorEndsTheRunAndIsRethrown() throws {
        var presented = 0
        let link = DisplayLink(display: FakeDisplay(refreshHz: 60)) { update in
            if update.callbackIndex == 10 { throw Boom() }
            update.drawable.addPresentedHandler { _ in presented += 1 }
            update.drawable.present()
        }
        #expect(throws: Boom.self) { _ = try link.run(for: .seconds(5)) }
        // The ten frames presented before the error completed before run returned.
        #expect(presented == 10)
    }

    @Test func lateRenderIsAccountedExactly() throws {
        let display = FakeDisplay(refreshHz: 60)
        let link = DisplayLink(display: display) { update in
            if update.callbackIndex == 20 {
                // Render work that ends 1.5 refreshes after the deadline: shown one refresh late.
                display.spin(until: update.deadline.advanced(by: .nanoseconds(25_000_000)).nanoseconds)
            }
            update.drawable.present()
        }
        let r = try link.run(for: .seconds(1))
        #expect(r.summary.droppedRefreshes == 2)
        #expect(r.summary.dropEvents == 1)
        #expect(r.summary.causes == ["render-late": 1])
        #expect(r.accounting.late == 1)
    }

    @Test func aDiscardedDrawableReportsPresentedTimeZero() throws {
        var outcomes: [UInt64: (DisplayInstant, FrameOutcome?)] = [:]
        let link = DisplayLink(display: FakeDisplay(refreshHz: 60), preferredFrameLatency: 3) { update in
            let d = update.drawable
            d.addPresentedHandler { outcomes[$0.drawableID] = ($0.presentedTime, $0.report?.outcome) }
            if update.callbackIndex == 11 {
                // Latency 3: frame 10 still waits for its vblank. This one asks for "as soon as
                // possible", so it is due at that vblank too and frame 10 would never be seen:
                // the pacer discards it.
                d.present(at: update.timestamp)
            } else {
                d.present()
            }
        }
        let r = try link.run(for: .seconds(1))
        #expect(r.summary.discarded == 1)
        let discarded = outcomes.filter { $0.value.1 == .discarded }
        #expect(discarded.count == 1)
        #expect(discarded.first?.key == 11)  // drawable IDs count callbacks from 1
        #expect(discarded.first?.value.0 == .zero)
        #expect(outcomes.filter { $0.value.1 == .onTime }.allSatisfy { $0.value.0 > .zero })
    }

    @Test func drawablesAreRecycledWhenTheAppLetsGo() throws {
        var ids = Set<ObjectIdentifier>()
        let link = DisplayLink(display: FakeDisplay(refreshHz: 60)) { update in
            ids.insert(ObjectIdentifier(update.drawable))
            update.drawable.present()
        }
        let r = try link.run(for: .seconds(2))
        #expect(r.summary.presented >= 119)
        #expect(ids.count <= 8)
    }

    @Test func asyncRunReturnsTheSameAccounting() async throws {
        let link = DisplayLink(display: FakeDisplay(refreshHz: 144)) { $0.drawable.present() }
        let r = try await link.run(for: .milliseconds(500))
        #expect(r.summary.refreshHz == 144)
        #expect(r.summary.presented >= 71 && r.summary.presented <= 73)
        #expect(r.summary.droppedRefreshes == 0)
    }

    @Test func updatesSequenceDrivesTheLinkUntilTheLoopBreaks() async throws {
        let display = FakeDisplay(refreshHz: 60)
        let link = DisplayLink(display: display)
        var seen: [UInt64] = []
        var targets: [DisplayInstant] = []
        for try await update in link.updates {
            seen.append(update.drawable.drawableID)
            targets.append(update.targetPresentationTimestamp)
            update.drawable.present()
            if seen.count == 30 { break }
        }
        #expect(seen == Array(1...30))
        for (a, b) in zip(targets, targets.dropFirst()) {
            #expect(a.duration(to: b) >= .nanoseconds(16_666_666) && a.duration(to: b) <= .nanoseconds(16_666_667))
        }
    }

    @Test func instantsAndDurations() {
        let t = DisplayInstant(nanoseconds: 1_500_000_000)
        #expect(t.advanced(by: .milliseconds(250)).nanoseconds == 1_750_000_000)
        #expect(t.duration(to: DisplayInstant(nanoseconds: 1_000_000_000)) == .milliseconds(-500))
        #expect(Duration.seconds(2).nanoseconds == 2_000_000_000)
        #expect(Duration.nanoseconds(-7).nanoseconds == -7)
        #expect(t.description == "1.500000000 s")
        #expect(DisplayInstant.zero < t)
    }
}
