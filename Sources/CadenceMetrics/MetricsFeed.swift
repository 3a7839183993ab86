import CadenceCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Carries a pacing loop's frames into ``FrameMetrics`` without ever holding the loop up:
/// ``push(_:)`` copies a ``FrameSample`` into a ring allocated up front (one producer, one
/// consumer, atomics only: no lock, no allocation, no system call), and a thread of its own
/// drains the ring into the registry every 100 ms, writes the textfile (node_exporter's
/// textfile-collector format, atomically) every `textfileInterval` seconds, and a scrape drains
/// it before answering. When the consumer falls a whole ring behind (4096 frames by default: 4 s
/// at 1000 Hz), the newest frames are not counted and ``lostSamples`` says how many.
///
/// One series: every frame is counted for the labels given to ``start(labels:)``.
public final class MetricsFeed: @unchecked Sendable {
    public let metrics = FrameMetrics()
    private var labels = FrameMetrics.Labels(connector: "", crtc: 0)
    private let textfile: String?
    private let textfileInterval: Double
    private let slots: UnsafeMutablePointer<FrameSample>
    private let mask: Int
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let lost = Atomic<Int>(0)
    /// Serializes the consumers (the feed's thread, scrapes, ``finish()``) and guards the rest.
    private let consumer = Lock()
    private var textfileError: MetricsError?
    private var thread: pthread_t?
    private let wake = Wakeup()

    /// A feed that writes `textfile` (nil: no file) every `textfileInterval` seconds once started;
    /// `capacity`: frames the ring holds (rounded up to a power of two).
    public init(textfile: String?, textfileInterval: Double = 10, capacity: Int = 4096) {
        self.textfile = textfile
        self.textfileInterval = textfileInterval
        var n = 1
        while n < max(2, capacity) { n <<= 1 }
        mask = n - 1
        slots = .allocate(capacity: n)
        slots.initialize(repeating: FrameSample(), count: n)
    }

    deinit {
        slots.deinitialize(count: mask + 1)
        slots.deallocate()
    }

    /// Writes the textfile now (before ``start(labels:)``: no series yet), so that a path that
    /// cannot be written fails before anything else happens.
    public func writeTextfileNow() throws {
        guard let path = textfile else { return }
        try consumer.withLock { try metrics.writeTextfile(path) }
    }

    /// Creates the series of `labels` (every counter at 0), writes the textfile with it and
    /// starts the feed's thread. Throws when the thread cannot be started.
    public func start(labels: FrameMetrics.Labels) throws {
        consumer.withLock {
            self.labels = labels
            metrics.declare(labels)
            writeTextfile()
        }
        let box = Unmanaged.passRetained(self)
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { arg in
            let me = Unmanaged<MetricsFeed>.fromOpaque(arg!).takeRetainedValue()
            me.loop()
            return nil
        }, box.toOpaque())
        guard rc == 0 else {
            box.release()
            throw MetricsError("cannot start the metrics thread: \(String(cString: strerror(rc)))")
        }
        consumer.withLock { thread = t }
    }

    /// Adds one completed frame. Called by the one producer (the pacing loop): copies the
    /// sample into the ring, never blocks and never allocates.
    public func push(_ sample: FrameSample) {
        let h = head.load(ordering: .relaxed)
        guard h &- tail.load(ordering: .acquiring) <= mask else {
            lost.wrappingAdd(1, ordering: .relaxed)
            return
        }
        slots[h & mask] = sample
        head.store(h &+ 1, ordering: .releasing)
    }

    /// Frames not counted because the ring was full.
    public var lostSamples: Int { lost.load(ordering: .relaxed) }

    /// Drains the ring, then the exposition text (a scrape calls this on the server's thread).
    public func exposition() -> [UInt8] {
        consumer.withLock { drain() }
        return metrics.exposition()
    }

    /// Sets the scanout verification's counters from its verdict (``FrameMetrics/setScanout(_:labels:)``)
    /// for the series being fed; call it before ``finish()``, which writes the last textfile.
    public func setScanout(_ v: ScanoutSummary) {
        consumer.withLock { metrics.setScanout(v, labels: labels) }
    }

    /// Stops the thread, counts every frame still in the ring and writes the textfile a last
    /// time. Returns the first textfile failure of the run, if any (the file then is not complete).
    @discardableResult
    public func finish() -> MetricsError? {
        let t: pthread_t? = consumer.withLock {
            defer { thread = nil }
            return thread
        }
        if let t {
            wake.stop()
            pthread_join(t, nil)
        }
        return consumer.withLock {
            drain()
            writeTextfile()
            return textfileError
        }
    }

    /// Must hold `consumer`.
    private func drain() {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        var i = t
        while i != h {
            metrics.record(slots[i & mask], labels: labels)
            i &+= 1
        }
        tail.store(h, ordering: .releasing)
    }

    /// Must hold `consumer`.
    private func writeTextfile() {
        guard let path = textfile else { return }
        do { try metrics.writeTextfile(path) } catch let e as MetricsError {
            if textfileError == nil { textfileError = e }
        } catch {
            if textfileError == nil { textfileError = MetricsError(String(describing: error)) }
        }
    }

    private func loop() {
        var last = Self.seconds()
        while wake.sleep(milliseconds: 100) {
            consumer.withLock {
                drain()
                let now = Self.seconds()
                if now - last >= textfileInterval {
                    last = now
                    writeTextfile()
                }
            }
        }
    }

    private static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// A sleep that ``stop()`` cuts short (pthread condition variable on CLOCK_MONOTONIC).
private final class Wakeup: @unchecked Sendable {
    private let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let c = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var stopped = false

    init() {
        m.initialize(to: pthread_mutex_t())
        c.initialize(to: pthread_cond_t())
        pthread_mutex_init(m, nil)
        var a = pthread_condattr_t()
        pthread_condattr_init(&a)
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC)
        pthread_cond_init(c, &a)
        pthread_condattr_destroy(&a)
    }

    deinit {
        pthread_cond_destroy(c)
        pthread_mutex_destroy(m)
        c.deallocate()
        m.deallocate()
    }

    /// Sleeps `milliseconds` (or less when stopped); false once stopped.
    func sleep(milliseconds: Int) -> Bool {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let ns = Int(ts.tv_nsec) + milliseconds * 1_000_000
        ts.tv_sec += ns / 1_000_000_000
        ts.tv_nsec = ns % 1_000_000_000
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        while !stopped {
            if pthread_cond_timedwait(c, m, &ts) == ETIMEDOUT { break }
        }
        return !stopped
    }

    func stop() {
        pthread_mutex_lock(m)
        stopped = true
        pthread_cond_broadcast(c)
        pthread_mutex_unlock(m)
    }
}
