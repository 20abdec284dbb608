// Control side. Errors from opening and running the JACK client, with messages meant for users.
import CJack

/// Why `JackHost.start()` failed.
public enum JackHostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No server named `server` accepts clients (libjack was told not to start one).
    case serverNotRunning(server: String, status: UInt32)
    /// `jack_client_open` failed for another reason (`status` holds the JackStatus bits).
    case openFailed(server: String, status: UInt32)
    /// The configuration cannot be opened (empty or too long name, channel counts out of range).
    case invalidConfiguration(String)
    /// A port could not be registered (port limit of the server reached, or name clash).
    case portRegistrationFailed(port: String)
    /// A `jack_set_*_callback` call was refused (the client is already active or the server is gone).
    case callbackRegistrationFailed(callback: String)
    /// `jack_activate` returned `code`.
    case activationFailed(code: Int32)
    /// The event thread or its wake-up pipe could not be created (`errno`).
    case systemResourceFailed(what: String, errno: Int32)
    /// `start()` was called while the host is running; call `stop()` first.
    case alreadyRunning

    public var description: String {
        switch self {
        case .serverNotRunning(let server, let status):
            return "no JACK server named '\(server)' is running (status \(JackStatusText.describe(status)));"
                + " start one (for example `soundstage run` does, or `jackd -n \(server) -d dummy`)"
                + " or pick another with --jack-server / $JACK_DEFAULT_SERVER"
        case .openFailed(let server, let status):
            return "could not open a JACK client on server '\(server)': \(JackStatusText.describe(status))"
        case .invalidConfiguration(let message):
            return "invalid JACK host configuration: \(message)"
        case .portRegistrationFailed(let port):
            return "JACK refused to register port '\(port)' (port limit reached? see jackd --port-max)"
        case .callbackRegistrationFailed(let callback):
            return "JACK refused the \(callback) callback"
        case .activationFailed(let code):
            return "jack_activate failed with code \(code)"
        case .systemResourceFailed(let what, let code):
            return "could not create the JACK host's \(what) (errno \(code))"
        case .alreadyRunning:
            return "the JACK host is already running; stop it first"
        }
    }
}

/// Decodes `jack_status_t` bits (types.h) into words for messages.
public enum JackStatusText {
    static let names: [(UInt32, String)] = [
        (JackFailure.rawValue, "Failure"), (JackInvalidOption.rawValue, "InvalidOption"),
        (JackNameNotUnique.rawValue, "NameNotUnique"), (JackServerStarted.rawValue, "ServerStarted"),
        (JackServerFailed.rawValue, "ServerFailed"), (JackServerError.rawValue, "ServerError"),
        (JackNoSuchClient.rawValue, "NoSuchClient"), (JackLoadFailure.rawValue, "LoadFailure"),
        (JackInitFailure.rawValue, "InitFailure"), (JackShmFailure.rawValue, "ShmFailure"),
        (JackVersionError.rawValue, "VersionError"), (JackBackendError.rawValue, "BackendError"),
        (JackClientZombie.rawValue, "ClientZombie")
    ]

    /// For example `0x11 (Failure|ServerFailed)`.
    public static func describe(_ status: UInt32) -> String {
        let hex = "0x" + String(status, radix: 16)
        let words = names.filter { status & $0.0 != 0 }.map(\.1)
        return words.isEmpty ? hex : "\(hex) (\(words.joined(separator: "|")))"
    }
}
