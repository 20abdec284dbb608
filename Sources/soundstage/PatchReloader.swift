// Control side. Hot reload for `soundstage run`: the patch file watched (`--watch`) and SIGHUP, both
// handled on one serial reload queue that parses, checks and applies the diff (`PatchLoader.reload`)
// through the engine's ordinary locked API, as an OSC request would. The render thread sees only the
// usual program swap and parameter ramps.
import AudioGraph
import Dispatch
import Foundation
import JackHost
import Locking
import OSCControl
import Patches
import SoundstageKit

/// Reloads the running patch on request, one reload at a time.
final class PatchReloader: Sendable {
    private let path: String
    private let engine: Engine
    private let host: JackHost
    private let osc: OSCService
    /// The patch as last loaded: the diff's baseline (which parameters the edit changed) and the JACK
    /// connections the patch made. Touched only on `queue`.
    private let baseline: Locked<PatchDocument>
    private let queue = DispatchQueue(label: "soundstage.reload")
    /// Timers and signal sources, kept alive until `stop()`.
    private let sources = Locked<[any DispatchSourceProtocol]>([])
    /// The watched file's last seen state, and since when it has not changed (the debounce).
    private let seen = Locked<FileStamp.Watch>(FileStamp.Watch())

    /// `stamp`: the file as it was before `loaded` was read, so an edit saved while `run` was starting
    /// is reloaded by the first poll.
    init(path: String, engine: Engine, host: JackHost, osc: OSCService, loaded: PatchDocument, stamp: FileStamp?) {
        self.path = path
        self.engine = engine
        self.host = host
        self.osc = osc
        baseline = Locked(loaded)
        seen.withLock {
            $0.reloaded = stamp
            $0.last = stamp
        }
    }

    /// SIGHUP reloads (the signal is no longer fatal to `run`).
    func reloadOnHangup() {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: queue)
        source.setEventHandler { [self] in reload(reason: "SIGHUP") }
        source.resume()
        sources.withLock { $0.append(source) }
    }

    /// Polls the file every `interval` seconds and reloads once a change has settled (unchanged for
    /// `settle` seconds), so a save written in steps (a slow copy, an editor writing in place) is read
    /// whole: a valid first half would otherwise be applied, removing what the second half keeps.
    /// Polling the path (not an inotify watch on the inode) follows editors that save by renaming a new
    /// file over the old one.
    func watch(interval: Double = 0.1, settle: Double = 1) {
        let quietPolls = max(1, Int((settle / interval).rounded()))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [self] in
            let now = FileStamp(path: path)
            let due = seen.withLock { watch -> Bool in
                if now != watch.last {
                    watch.last = now
                    watch.quietPolls = 0
                    return false
                }
                watch.quietPolls += 1
                return watch.quietPolls >= quietPolls && now != nil && now != watch.reloaded
            }
            if due { reload(reason: "file changed") }
        }
        timer.resume()
        sources.withLock { $0.append(timer) }
    }

    /// Stops watching and waits for a reload under way.
    func stop() {
        for source in sources.withLock({ $0 }) { source.cancel() }
        queue.sync {}
    }

    /// On `queue`: parse, check, diff and apply; report either way.
    private func reload(reason: String) {
        seen.withLock { $0.reloaded = FileStamp(path: path) }
        let old = baseline.withLock { $0 }
        do throws(PatchLoadError) {
            let (document, summary) = try PatchLoader.reload(path: path, into: engine, baseline: old)
            for warning in summary.warnings { printError(warning.description) }
            let jack = followJackConnections(from: old, to: document)
            baseline.withLock { $0 = document }
            say("patch reloaded (\(reason)): \(summary)\(jack)")
            if !summary.needsRestart.isEmpty {
                printError(
                    "\(path): not applied until soundstage run starts again: "
                        + summary.needsRestart.joined(separator: ", "))
            }
            osc.post(.patchReloaded(path: path))
        } catch {
            printError("\(path): reload refused (\(reason)); the running graph is unchanged:\n\(error.description)")
            osc.post(.patchReloadFailed(path: path, message: error.description))
        }
    }

    /// Makes the patch's `jack.connections` the edit's (`PatchJackSettings.steps`: made before broken).
    private func followJackConnections(from old: PatchDocument, to new: PatchDocument) -> String {
        var made = 0
        var undone = 0
        for step in old.jack.steps(to: new.jack) {
            switch step {
            case .connect(let from, let to):
                let result = host.connect(from, to: to)
                if result.isConnected { made += 1 } else { printError("jack connection: \(result)") }
            case .disconnect(let from, let to):
                let result = host.disconnect(from, from: to)
                // A port the reload removed (an insert's) took its connections with it.
                if result.isConnected || result.portIsGone {
                    undone += 1
                } else {
                    printError("jack connection: \(result)")
                }
            }
        }
        guard made + undone > 0 else { return "" }
        return "; JACK: \(made) connection(s) made, \(undone) removed"
    }
}

/// What identifies one version of a file on disk: modification time, size and inode.
struct FileStamp: Equatable, Sendable {
    var seconds: Int
    var nanoseconds: Int
    var size: Int64
    var inode: UInt64

    /// Nil when the file cannot be examined (it is being replaced, or was removed).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
        size = Int64(info.st_size)
        inode = UInt64(info.st_ino)
    }

    struct Watch: Sendable {
        /// The stamp at the last poll.
        var last: FileStamp?
        /// The stamp of the version last reloaded (or loaded at start).
        var reloaded: FileStamp?
        /// Polls since the stamp last changed.
        var quietPolls = 0
    }
}
