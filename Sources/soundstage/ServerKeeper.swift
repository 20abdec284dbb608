// Control side. The JACK server `soundstage run` started itself: kept running for as long as run runs.
// When it dies, a worker starts it again under the same name (the host reconnects on its own).
import Dispatch
import Foundation
import JackHost
import Locking
import Synchronization

final class ServerKeeper: Sendable {
    private let process: Locked<JackServerProcess?>
    private let name: String?
    private let sampleRate: Int
    private let isStopped = Atomic<Bool>(false)
    private let isRestarting = Atomic<Bool>(false)
    private let worker = DispatchQueue(label: "soundstage.server-keeper")

    init(_ process: JackServerProcess, name: String?, sampleRate: Int) {
        self.process = Locked(process)
        self.name = name
        self.sampleRate = sampleRate
    }

    /// The server died: reaps it and starts a new one, trying again every second until one runs or
    /// `stop()`. Never blocks the caller.
    func serverLost() {
        // Relaxed: flags; the worker queue orders the work.
        if isStopped.load(ordering: .relaxed) || isRestarting.exchange(true, ordering: .relaxed) { return }
        worker.async { [self] in
            defer { isRestarting.store(false, ordering: .relaxed) }
            process.withLock { $0 }?.stop(gracePeriod: 0.5)
            while !isStopped.load(ordering: .relaxed) {
                do {
                    let started = try JackServerLauncher.start(name: name, sampleRate: sampleRate)
                    process.withLock { $0 = started }
                    say("started jackd again (\(started.backend) backend, \(sampleRate) Hz), pid \(started.pid)")
                    return
                } catch {
                    if case .alreadyRunning? = error as? JackServerLauncherError { return }
                    printError("could not start the JACK server again: \(error); trying again in 1 s")
                    usleep(1_000_000)
                }
            }
        }
    }

    /// Stops the server (after any restart under way).
    func stop() {
        isStopped.store(true, ordering: .relaxed)
        worker.sync {}
        process.withLock { $0 }?.stop()
    }
}
