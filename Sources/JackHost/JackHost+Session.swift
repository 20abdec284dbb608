// Control side. What the audio session needs of the client besides ports: JACK transport (remote
// control: start, stop and locate drive the now-playing player) and metadata on our client (the
// now-playing information, for `jack_property -l` and other clients).
import CJack
import Glibc

/// JACK transport as `jack_transport_query` reports it.
public struct JackTransportPosition: Sendable, Equatable {
    /// Rolling (or starting) rather than stopped.
    public var isRolling: Bool
    /// The transport frame.
    public var frame: Int

    public init(isRolling: Bool, frame: Int) {
        self.isRolling = isRolling
        self.frame = frame
    }
}

extension JackHost {
    /// Control side. The transport's state and frame, nil when the host is not running.
    public func transportPosition() -> JackTransportPosition? {
        withClientAndName { client, _ in
            var position = jack_position_t()
            let state = jack_transport_query(client, &position)
            return JackTransportPosition(
                isRolling: state == JackTransportRolling || state == JackTransportStarting, frame: Int(position.frame))
        }
    }

    /// Control side. Replaces the metadata properties this host keeps on its client (key → text), now
    /// and after every (re)open. Keys are URIs by JACK's convention.
    public func setClientProperties(_ properties: [String: String]) {
        core.state.withLock { state in
            let old = state.clientProperties
            state.clientProperties = properties
            guard let session = state.session, let client = session.client else { return }
            Self.applyProperties(properties, removing: Set(old.keys).subtracting(properties.keys), client: client)
        }
    }

    /// The metadata properties this host keeps on its client.
    public var clientProperties: [String: String] { core.state.withLock { $0.clientProperties } }

    /// Sets `properties` on our client and removes `removed` (control side, with the client open).
    static func applyProperties(_ properties: [String: String], removing removed: Set<String>, client: OpaquePointer) {
        guard let text = jack_client_get_uuid(client) else { return }
        defer { jack_free(text) }
        var uuid = jack_uuid_t()
        guard jack_uuid_parse(text, &uuid) == 0 else { return }
        for key in removed { _ = jack_remove_property(client, uuid, key) }
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            _ = jack_set_property(client, uuid, key, value, "text/plain")
        }
    }
}
