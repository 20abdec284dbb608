// Test helper. Opening a one-port JACK test client (never starting a server), with cleanup on failure.
import CJack

/// Opens client `name` on `server`, registers the audio port `port` with `flags`, calls `prepare` with
/// the port (before any process callback can run), installs `process` with `context` and activates.
/// On failure the client is closed and the error names `what`; the caller still owns `context`.
func openJackTestClient(
    name: String, server: String, port portName: String, flags: JackPortFlags, what: String,
    process: JackProcessCallback, context: UnsafeMutableRawPointer, prepare: (OpaquePointer) -> Void
) throws -> (client: OpaquePointer, port: OpaquePointer) {
    var status = jack_status_t(rawValue: 0)
    guard
        let client = jackshim_client_open(
            name, jack_options_t(rawValue: JackNoStartServer.rawValue), &status,
            server)
    else {
        throw FixtureError("\(what) could not open on '\(server)': status \(status.rawValue)")
    }
    guard let port = jack_port_register(client, portName, JACK_DEFAULT_AUDIO_TYPE, UInt(flags.rawValue), 0) else {
        _ = jack_client_close(client)
        throw FixtureError("\(what) could not register its port")
    }
    prepare(port)
    _ = jack_set_process_callback(client, process, context)
    guard jack_activate(client) == 0 else {
        _ = jack_client_close(client)
        throw FixtureError("\(what) could not activate")
    }
    return (client, port)
}
