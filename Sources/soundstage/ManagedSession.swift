// Control side, the control loop's thread. `soundstage run` under the New Session Manager: announce,
// wait for `open`, play the session's folder as the client id, answer `save`, report dirtiness, switch
// sessions in place. The protocol itself is `NSMClient`'s; the folder's format is `SessionFolder`'s.
import ArgumentParser
import Foundation
import JackHost
import OSCControl
import Patches
import SoundstageKit

extension RunCommand {
    /// Runs under the session manager at `url`. Returns false when the manager cannot be reached or
    /// refuses us (the caller then runs unmanaged, as the protocol asks).
    func runManaged(url: String) throws -> Bool {
        guard let managed = ManagedSession.connect(url: url, template: patch) else { return false }
        // Managed from here on: SIGTERM is the manager's quit, caught even before the session opens.
        let signals = SignalWatcher()
        guard var session = managed.waitForOpen(signals: signals) else {
            say("\(signals.received ?? "signal") received before the session opened: stopping.")
            return true
        }
        let ownServer = try ensureServer(rate: Int(session.loaded.engine.configuration.sampleRate))
        defer { ownServer?.stop() }
        while true {
            managed.begin(session)
            let outcome: PlayOutcome
            do {
                outcome = try play(
                    session.loaded, patchPath: session.folder.patchPath, clientName: session.clientID,
                    roots: [session.folder.path] + fileRoot, ownServer: ownServer, signals: signals, managed: managed)
            } catch {
                managed.failedToOpen("Soundstage could not start playing the session (see its output)")
                throw error
            }
            guard case .switched(let next) = outcome else { return true }
            session = next
        }
    }
}

/// One run under a session manager: the client, the session in force and whether it has unsaved changes.
final class ManagedSession {
    /// A session ready to play: its folder loaded and saved (a new session is saved at once).
    struct Prepared {
        let folder: SessionFolder
        let displayName: String
        let clientID: String
        let loaded: LoadedPatch
    }

    /// The name announced (and the application part of every client id the manager gives).
    static let applicationName = "Soundstage"
    /// How long to wait for the manager's answer to the announce before running unmanaged.
    static let announceTimeout = 5.0
    /// How often the running state is compared with the saved one when engine commands or JACK
    /// connections changed, and at the latest (seconds).
    static let dirtyCheckInterval = 0.2
    static let fullCheckInterval = 2.0

    private let nsm: NSMClient
    /// The patch given on the command line: what a new session starts from.
    private let template: String?
    /// Messages that arrived with the announce reply.
    private var early: [NSMEvent] = []
    private var current: Prepared?
    /// The running state as last saved or loaded (`SessionFolder.document` as YAML), and what the
    /// manager was last told.
    private var savedState: String?
    private var reportedDirty: Bool?
    private var nextDirtyCheck = Date.distantPast
    private var nextFullCheck = Date.distantPast
    private var lastMarker: ChangeMarker?

    private init(nsm: NSMClient, template: String?) {
        self.nsm = nsm
        self.template = template
    }

    /// Announces to the manager at `url` and waits for its answer. Nil (after saying why) when the URL is
    /// unusable, nothing answers or the manager refuses.
    static func connect(url: String, template: String?) -> ManagedSession? {
        let nsm: NSMClient
        do { nsm = try NSMClient(url: url) } catch {
            printError("\(error): running without session management.")
            return nil
        }
        let session = ManagedSession(nsm: nsm, template: template)
        nsm.announce(applicationName: applicationName, executable: CommandLine.arguments[0])
        let deadline = Date().addingTimeInterval(announceTimeout)
        while Date() < deadline {
            var events = nsm.receive(timeoutMilliseconds: 50)
            while !events.isEmpty {
                let event = events.removeFirst()
                switch event {
                case .announced(let welcome, let manager, let capabilities):
                    say("Session manager '\(manager)' (\(capabilities)) at \(nsm.managerURL): \(welcome)")
                    session.early = events
                    return session
                case .announceRefused(let code, let message):
                    printError("the session manager refused Soundstage (\(code)): \(message); running unmanaged.")
                    return nil
                default:
                    continue
                }
            }
        }
        printError("no answer from the session manager at \(url) within \(Int(announceTimeout)) s: running unmanaged.")
        return nil
    }

    /// Waits for the first `open` that prepares a session (a failed one is answered and waited past).
    /// Nil when a signal arrives first.
    func waitForOpen(signals: SignalWatcher) -> Prepared? {
        while signals.received == nil {
            let events = early + nsm.receive(timeoutMilliseconds: 50)
            early = []
            for (index, event) in events.enumerated() {
                if case .open(let path, let displayName, let clientID) = event {
                    if let prepared = prepare(path: path, displayName: displayName, clientID: clientID, rate: nil) {
                        // What came after the open is for the session it opens.
                        early = Array(events[(index + 1)...])
                        return prepared
                    }
                } else if case .save = event {
                    nsm.error("/nsm/client/save", .noSessionOpen, "no session is open yet")
                } else {
                    answer(event)
                }
            }
        }
        return nil
    }

    /// The session that is about to play.
    func begin(_ session: Prepared) {
        current = session
        savedState = nil
        reportedDirty = nil
        lastMarker = nil
    }

    /// The session plays (JACK client open as the client id, OSC up): answers the `open`.
    func opened(_ loaded: LoadedPatch, host: JackOSCHost) {
        guard let current else { return }
        let name = host.host.actualClientName ?? current.clientID
        nsm.reply(to: "/nsm/client/open", "Soundstage plays '\(current.folder.path)' as JACK client '\(name)'")
        savedState = state(of: loaded, host: host)
        report(dirty: false)
    }

    /// The session could not start: the `open` gets an error.
    func failedToOpen(_ message: String) {
        nsm.error("/nsm/client/open", .general, message)
    }

    /// Serves the manager's messages and reports dirtiness; called every control-loop turn. Returns a
    /// session to switch to when an `open` prepared one.
    func service(_ loaded: LoadedPatch, host: JackOSCHost) -> Prepared? {
        let events = early + nsm.receive()
        early = []
        for (index, event) in events.enumerated() {
            switch event {
            case .save:
                save(loaded, host: host)
            case .open(let path, let displayName, let clientID):
                // A new JACK client cannot open while the server is away: the session in force waits for it.
                if host.host.isServerLost {
                    nsm.error(
                        "/nsm/client/open", .notNow,
                        "the JACK server is away; the session in force waits for it (open again once it is back)")
                    continue
                }
                // The running session keeps playing until the new one is ready, and when it cannot be.
                if let next = prepare(
                    path: path, displayName: displayName, clientID: clientID,
                    rate: loaded.engine.configuration.sampleRate)
                {
                    early = Array(events[(index + 1)...])
                    return next
                }
            default:
                answer(event)
            }
        }
        let now = Date()
        if let savedState, now >= nextDirtyCheck {
            nextDirtyCheck = now.addingTimeInterval(Self.dirtyCheckInterval)
            // The snapshot costs in proportion to the graph: taken when an engine command or a JACK
            // connection changed since the last one, and every `fullCheckInterval` for the rest.
            let edges = jackEdges(host)
            let marker = ChangeMarker(commands: loaded.engine.renderEngine.commands.producedCount, edges: edges)
            if marker != lastMarker || now >= nextFullCheck {
                lastMarker = marker
                nextFullCheck = now.addingTimeInterval(Self.fullCheckInterval)
                report(dirty: state(of: loaded, host: host, edges: edges) != savedState)
            }
        }
        return nil
    }

    /// What tells the dirty check that something may have changed.
    private struct ChangeMarker: Equatable {
        var commands: Int
        var edges: Set<JackEdge>
    }

    // MARK: Work

    /// Opens `path` as a session folder: its patch.yaml, or a new session made from the template (or an
    /// empty graph) and saved there first. Answers `/error` and returns nil when it cannot.
    private func prepare(path: String, displayName: String, clientID: String, rate: Double?) -> Prepared? {
        // Checked before anything is made or stopped: a switch keeps the session in force.
        if let problem = JackHost.clientNameProblem(clientID) {
            nsm.error("/nsm/client/open", .general, "the client id cannot be a JACK client name: \(problem)")
            return nil
        }
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        guard path.hasPrefix("/"), standardized != "/" else {
            nsm.error(
                "/nsm/client/open", .createFailed,
                "the session path '\(path)' must be an absolute path below the root folder")
            return nil
        }
        let folder = SessionFolder(path: path)
        do { try folder.create() } catch {
            printError(error.message)
            nsm.error("/nsm/client/open", .createFailed, error.message)
            return nil
        }
        let overrides = PatchLoader.Overrides(sampleRate: rate, toleratesFileProblems: true)
        if !folder.hasPatch {
            do {
                // By its absolute path, so every file reference it makes resolves wherever it is saved.
                let source =
                    try template.map {
                        try PatchLoader.load(
                            path: URL(fileURLWithPath: $0).standardizedFileURL.path, overrides: overrides)
                    }
                    ?? PatchLoader.build(PatchDocument(), overrides: overrides)
                for warning in source.warnings { printError(warning.description) }
                var document = SessionFolder.document(
                    of: source.engine,
                    jackConnections: source.jackConnections.map { (source: $0.from, destination: $0.to) },
                    clientName: nil, carrying: source.document)
                document.jack.connectPhysical = source.document.jack.connectPhysical
                let saved = try folder.save(document, base: Self.folder(of: source.document))
                say(
                    "New session in \(folder.path)" + (template.map { " from \($0)" } ?? " (empty graph)")
                        + (saved.copied.isEmpty ? "" : "; copied in: \(saved.copied.joined(separator: ", "))"))
                tellMissing(saved.missing)
            } catch let error as PatchLoadError {
                printError(error.description)
                nsm.error(
                    "/nsm/client/open", .badProject, "the patch \(template ?? "") has errors: \(error.description)")
                return nil
            } catch {
                printError("cannot make the session in \(folder.path): \(error)")
                nsm.error("/nsm/client/open", .createFailed, "\(error)")
                return nil
            }
        }
        do {
            let loaded = try PatchLoader.load(path: folder.patchPath, overrides: overrides)
            for warning in loaded.warnings { printError(warning.description) }
            return Prepared(folder: folder, displayName: displayName, clientID: clientID, loaded: loaded)
        } catch {
            printError(error.description)
            nsm.error("/nsm/client/open", .badProject, "\(folder.patchPath) cannot be loaded: \(error.description)")
            return nil
        }
    }

    /// `/nsm/client/save`: the running state into the folder, then `/reply` (or `/error`).
    private func save(_ loaded: LoadedPatch, host: JackOSCHost) {
        guard let current else {
            nsm.error("/nsm/client/save", .noSessionOpen, "no session is open")
            return
        }
        let document = SessionFolder.document(
            of: loaded.engine, jackConnections: pairs(jackEdges(host)), clientName: host.host.actualClientName,
            carrying: loaded.document)
        do {
            let saved = try current.folder.save(document, base: Self.folder(of: loaded.document))
            let copied = saved.copied.joined(separator: ", ")
            say(
                "Saved the session to \(current.folder.patchPath)" + (copied.isEmpty ? "." : " (copied in: \(copied)).")
            )
            if !copied.isEmpty { nsm.message(priority: 1, "copied into the session: \(copied)") }
            tellMissing(saved.missing)
            nsm.reply(to: "/nsm/client/save", "saved \(current.folder.patchPath)")
            savedState = state(of: loaded, host: host)
            report(dirty: false)
        } catch {
            printError("could not save the session: \(error)")
            nsm.error("/nsm/client/save", .general, error.message)
        }
    }

    /// The running state as compared for dirtiness: what a save would write, before files are copied.
    private func state(of loaded: LoadedPatch, host: JackOSCHost, edges: Set<JackEdge>? = nil) -> String {
        PatchWriter.yaml(
            SessionFolder.document(
                of: loaded.engine, jackConnections: pairs(edges ?? jackEdges(host)),
                clientName: host.host.actualClientName, carrying: nil))
    }

    /// The JACK connections a save holds: the live ones, and those waiting for a port (all of them while
    /// the server is lost, so a save then keeps them and the loss alone does not make the session dirty).
    private func jackEdges(_ host: JackOSCHost) -> Set<JackEdge> {
        Set(host.savedConnections().map { JackEdge(source: $0.source, destination: $0.destination) })
    }

    private func pairs(_ edges: Set<JackEdge>) -> [(source: String, destination: String)] {
        edges.map { (source: $0.source, destination: $0.destination) }
    }

    /// The folder of the patch file `document` was read from (what its relative references mean).
    private static func folder(of document: PatchDocument) -> String? {
        document.path.map { URL(fileURLWithPath: $0).deletingLastPathComponent().standardizedFileURL.path }
    }

    /// Files the session refers to that do not exist: on stderr and to the manager's user.
    private func tellMissing(_ missing: [String]) {
        guard !missing.isEmpty else { return }
        let text = "missing, so not copied into the session: \(missing.joined(separator: ", "))"
        printError(text)
        nsm.message(priority: 2, text)
    }

    private func report(dirty: Bool) {
        guard reportedDirty != dirty else { return }
        reportedDirty = dirty
        nsm.report(dirty: dirty)
    }

    /// Answers what is neither open nor save.
    private func answer(_ event: NSMEvent) {
        switch event {
        case .refused(let address, let code, let reason):
            if let code { nsm.error(address, code, reason) }
            printError("session manager: \(reason)")
        case .announced, .announceRefused, .sessionIsLoaded, .open, .save:
            break
        }
    }
}
