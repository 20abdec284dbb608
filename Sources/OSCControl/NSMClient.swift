// Control side, one thread (the caller's: `soundstage run`'s control loop). The client half of the New
// Session Manager protocol (NSM API 1.1.2, docs/NSM.md) over liblo: one socket of its own, from which
// the announce and everything after it is sent, as the protocol requires.
import CLibLo
import Foundation
import Glibc

/// A message from the session manager, parsed.
public enum NSMEvent: Equatable, Sendable {
    /// `/reply "/nsm/server/announce" s:welcome s:manager s:capabilities`: we are managed from now on.
    case announced(welcome: String, manager: String, capabilities: String)
    /// `/error "/nsm/server/announce" i:code s:message`: the manager refused us.
    case announceRefused(code: Int32, message: String)
    /// `/nsm/client/open s:path s:display_name s:client_id`.
    case open(path: String, displayName: String, clientID: String)
    /// `/nsm/client/save`.
    case save
    /// `/nsm/client/session_is_loaded` (a hint; needs no answer).
    case sessionIsLoaded
    /// A message the protocol gives us but with arguments it does not allow, or one we do not serve;
    /// `answer` is the `/error` it deserves (nil: nothing is answered, as for unknown replies).
    case refused(address: String, answer: NSMErrorCode?, reason: String)
}

/// NSM's error codes (API document, "Error Code Definitions"). The API names `ERR_SAVE_FAILED` for
/// save but gives it no number; a failed save is answered with `general`.
public enum NSMErrorCode: Int32, Sendable, CaseIterable {
    case general = -1
    case incompatibleAPI = -2
    case blacklisted = -3
    case launchFailed = -4
    case noSuchFile = -5
    case noSessionOpen = -6
    case unsavedChanges = -7
    case notNow = -8
    case badProject = -9
    case createFailed = -10

    /// The symbolic name the API document uses.
    public var symbol: String {
        switch self {
        case .general: return "ERR_GENERAL"
        case .incompatibleAPI: return "ERR_INCOMPATIBLE_API"
        case .blacklisted: return "ERR_BLACKLISTED"
        case .launchFailed: return "ERR_LAUNCH_FAILED"
        case .noSuchFile: return "ERR_NO_SUCH_FILE"
        case .noSessionOpen: return "ERR_NO_SESSION_OPEN"
        case .unsavedChanges: return "ERR_UNSAVED_CHANGES"
        case .notNow: return "ERR_NOT_NOW"
        case .badProject: return "ERR_BAD_PROJECT"
        case .createFailed: return "ERR_CREATE_FAILED"
        }
    }
}

/// Why the NSM client could not start (then the program runs unmanaged).
public struct NSMClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Talks to the session manager at `NSM_URL`.
///
/// ```swift
/// let nsm = try NSMClient(url: environment["NSM_URL"]!)
/// nsm.announce(applicationName: "Soundstage", executable: CommandLine.arguments[0])
/// for event in nsm.receive(timeoutMilliseconds: 100) { … }
/// nsm.reply(to: "/nsm/client/open", "opened")
/// ```
///
/// Not thread-safe: one thread owns it. Sends never block for long (UDP).
public final class NSMClient {
    /// The API version announced: the New Session Manager project's API 1.1.2 (messages of 1.1).
    public static let apiVersion = (major: Int32(1), minor: Int32(1))
    /// What Soundstage can do under NSM.
    public static let capabilities = ":switch:dirty:message:"

    private let server: lo_server
    private var target: LoAddress
    /// Where the manager listens (from `NSM_URL`, then from the source of its announce reply).
    public var managerURL: String { target.url }
    /// Parsed messages of the current receive.
    private var collected: [NSMEvent] = []

    /// Opens a socket of the URL's protocol (UDP for nsmd) on a free port. Throws when the URL is not an
    /// OSC URL liblo understands or its host does not resolve.
    public init(url: String) throws(NSMClientError) {
        guard let address = LoAddress.url(url) else {
            throw NSMClientError("NSM_URL '\(url)' is not an osc.udp:// or osc.tcp:// URL with a host that resolves")
        }
        guard let server = lo_server_new_with_proto(nil, address.proto, nil) else {
            throw NSMClientError("cannot open a socket to talk to the session manager")
        }
        self.server = server
        target = address
        _ = lo_server_enable_coercion(server, 0)
        _ = lo_server_add_method(server, nil, nil, nsmHandler, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { lo_server_free(server) }

    /// This client's own port (for logs).
    public var port: Int { Int(lo_server_get_port(server)) }

    /// `/nsm/server/announce s:application_name s:capabilities s:executable_name i:major i:minor i:pid`.
    public func announce(applicationName: String, executable: String, pid: Int32 = getpid()) {
        send(
            "/nsm/server/announce",
            [
                .string(applicationName), .string(Self.capabilities), .string(executable),
                .int32(Self.apiVersion.major), .int32(Self.apiVersion.minor), .int32(pid)
            ])
    }

    /// Waits up to `timeoutMilliseconds` for the first message, then takes every waiting one.
    public func receive(timeoutMilliseconds: Int32 = 0) -> [NSMEvent] {
        collected = []
        var timeout = timeoutMilliseconds
        while lo_server_recv_noblock(server, timeout) > 0 { timeout = 0 }
        defer { collected = [] }
        return collected
    }

    /// `/reply s:path s:message`: an action asked for by `path` is complete.
    public func reply(to path: String, _ message: String) { send("/reply", [.string(path), .string(message)]) }

    /// `/error s:path i:code s:message`.
    public func error(_ path: String, _ code: NSMErrorCode, _ message: String) {
        send("/error", [.string(path), .int32(code.rawValue), .string(message)])
    }

    /// `/nsm/client/is_dirty` or `/nsm/client/is_clean`.
    public func report(dirty: Bool) { send(dirty ? "/nsm/client/is_dirty" : "/nsm/client/is_clean", []) }

    /// `/nsm/client/message i:priority s:text` (priority 0…3, 3 the most important).
    public func message(priority: Int32, _ text: String) {
        send("/nsm/client/message", [.int32(min(max(priority, 0), 3)), .string(text)])
    }

    private func send(_ address: String, _ arguments: [OSCArgument]) {
        let m = LoValues.message(arguments)
        defer { lo_message_free(m) }
        _ = lo_send_message_from(target.raw, server, address, m)
    }

    // MARK: Parsing (inside lo_server_recv)

    fileprivate func received(_ address: String, _ arguments: [OSCArgument]?, source: lo_address?) {
        guard let arguments else {
            collected.append(.refused(address: address, answer: .general, reason: "an argument type NSM does not use"))
            return
        }
        let event = Self.parse(address, arguments)
        if case .announced = event, let source, lo_address_get_protocol(source) == LO_UDP,
            let host = lo_address_get_hostname(source), let port = lo_address_get_port(source),
            let from = LoAddress.udp(host: String(cString: host), port: Int(String(cString: port)) ?? 0)
        {
            // The protocol: take the manager's address from the source of its reply.
            target = from
        }
        collected.append(event)
    }

    /// One message from the manager as an event.
    static func parse(_ address: String, _ arguments: [OSCArgument]) -> NSMEvent {
        func strings(_ count: Int) -> [String]? {
            guard arguments.count == count else { return nil }
            let texts = arguments.compactMap { argument -> String? in
                if case .string(let s) = argument { return s }
                return nil
            }
            return texts.count == count ? texts : nil
        }
        switch address {
        case "/reply":
            guard arguments.first == .string("/nsm/server/announce") else {
                return .refused(address: address, answer: nil, reason: "a reply to nothing we sent")
            }
            let texts = arguments.dropFirst().map { argument -> String in
                if case .string(let s) = argument { return s }
                return ""
            }
            return .announced(
                welcome: texts.count > 0 ? texts[0] : "", manager: texts.count > 1 ? texts[1] : "",
                capabilities: texts.count > 2 ? texts[2] : "")
        case "/error":
            guard arguments.first == .string("/nsm/server/announce") else {
                return .refused(address: address, answer: nil, reason: "an error about nothing we sent")
            }
            var code: Int32 = NSMErrorCode.general.rawValue
            if arguments.count > 1, case .int32(let c) = arguments[1] { code = c }
            var text = ""
            if arguments.count > 2, case .string(let s) = arguments[2] { text = s }
            return .announceRefused(code: code, message: text)
        case "/nsm/client/open":
            guard let s = strings(3) else {
                return .refused(
                    address: address, answer: .general, reason: "open takes s:path s:display_name s:client_id")
            }
            return .open(path: s[0], displayName: s[1], clientID: s[2])
        case "/nsm/client/save":
            guard arguments.isEmpty else {
                return .refused(address: address, answer: .general, reason: "save takes no arguments")
            }
            return .save
        case "/nsm/client/session_is_loaded":
            return .sessionIsLoaded
        default:
            // A client message we did not claim gets an error; anything else (a peer's broadcast the
            // manager relays) is not the manager asking, and is left unanswered.
            return .refused(
                address: address, answer: address.hasPrefix("/nsm/client/") ? .general : nil,
                reason: "Soundstage does not serve '\(OSCText.sanitized(address))' (capabilities \(capabilities))")
        }
    }
}

private let nsmHandler: LoMethodHandler = { path, types, argv, argc, message, userData in
    guard let path, let userData else { return 0 }
    let client = Unmanaged<NSMClient>.fromOpaque(userData).takeUnretainedValue()
    let source = message.flatMap { lo_message_get_source($0) }
    client.received(String(cString: path), LoValues.arguments(types: types, argv: argv, argc: argc), source: source)
    return 0
}
