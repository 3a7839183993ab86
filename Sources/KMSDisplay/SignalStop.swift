import CCadenceShim

/// SIGINT, SIGTERM and SIGHUP (the terminal went away) as a stop request that the caller owns, so that a program driving a
/// display can give the console back before it exits instead of dying with its mode set.
///
///     let stop = SignalStop()                    // handlers installed
///     let result = try link.run(for: .seconds(60), shouldStop: { stop.isRequested })
///     try display.close()                        // the console is back
///     if let s = stop.signal { exit(128 + s) }   // the shell's convention
///
/// The handlers only record the signal (async-signal-safe). A KMS display waiting for events
/// wakes up when one arrives, so a run stops within a refresh or so. Signal dispositions
/// belong to the process: hold one `SignalStop` at a time; ``remove()`` (or deinit) restores
/// the default handlers.
public final class SignalStop: Sendable {
    /// Installs the SIGINT, SIGTERM and SIGHUP handlers.
    public init() { cadence_install_stop_handlers() }

    deinit { remove() }

    /// The signal received since ``init()`` (2 for SIGINT, 15 for SIGTERM, 1 for SIGHUP), or nil.
    public var signal: Int32? {
        let s = cadence_stop_signal()
        return s == 0 ? nil : s
    }

    /// True once a stop signal arrived.
    public var isRequested: Bool { cadence_stop_signal() != 0 }

    /// Restores the default handlers (a second SIGINT then ends the process as usual).
    public func remove() { cadence_remove_stop_handlers() }
}
