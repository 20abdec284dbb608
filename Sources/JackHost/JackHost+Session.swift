// Control side. What the audio session needs of the client besides ports: JACK transport (remote
// control: start, stop and locate drive the now-playing player) and metadata on our client (the
// now-playing information, for `jack_property -l` and other clients).
import CJack
import Glibc

/// JACK transport as `jack_transport_query` reports it.
public struct JackTransportPosition: Sendable, Equatable {
    /// Rolling. Starting counts as stopped: JACK applies a start at the end of a cycle and a locate at
    /// the beginning of the next, so a locate sent just before a start shows the old frame for one
    /// Starting cycle; following that would play from the old position for a period or two.
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
                isRolling: state == JackTransportRolling, frame: Int(position.frame))
        }
    }

    /// Control side. Replaces the metadata properties this host keeps on its client (key → text), now
    /// and after every (re)open. Keys are URIs by JACK's convention. Other clients may read between
    /// two writes, so the keys in `last` are written after all others, in that order (a state whose
    /// trigger is written last never reads half-changed).
    public func setClientProperties(_ properties: [String: String], writingLast last: [String] = []) {
        core.state.withLock { state in
            let old = state.clientProperties
            state.clientProperties = properties
            state.removalsNotLanded.subtract(properties.keys)
            state.propertiesWrittenLast = last
            guard let session = state.session, let client = session.client else { return }
            // Only what changed: every set wakes every client's property callback.
            let changed = properties.filter { old[$0.key] != $0.value }
            let removed = Set(old.keys).subtracting(properties.keys)
            if let write = staleStoreWrite(client: client, session: session, last: last) {
                queue(write.with(properties: changed, removed: removed))
                return
            }
            Self.applyProperties(changed, removing: removed, last: last, client: client)
        }
    }

    /// `keys` sorted, with those in `last` moved to the end in `last`'s order.
    static func writeOrder(of keys: some Sequence<String>, last: [String]) -> [String] {
        let trailing = Set(last)
        let keys = Set(keys)
        return keys.subtracting(trailing).sorted() + last.filter { keys.contains($0) }
    }

    /// The metadata properties this host keeps on its client.
    public var clientProperties: [String: String] { core.state.withLock { $0.clientProperties } }

    /// Sets `properties` on our client and removes `removed` (control side, with the client open).
    static func applyProperties(
        _ properties: [String: String], removing removed: Set<String>, last: [String], client: OpaquePointer
    ) {
        guard let text = jack_client_get_uuid(client) else { return }
        defer { jack_free(text) }
        var uuid = jack_uuid_t()
        guard jack_uuid_parse(text, &uuid) == 0 else { return }
        for key in removed { removeProperty(key, of: uuid, client: client) }
        for key in writeOrder(of: properties.keys, last: last) {
            let value = properties[key] ?? ""
            // JACK refuses empty values: an empty text is no property.
            if value.isEmpty {
                removeProperty(key, of: uuid, client: client)
            } else {
                _ = JackRequests.serialized { jack_set_property(client, uuid, key, value, "text/plain") }
            }
        }
    }

    /// Removes `key` from `subject` if the store has it: libjack prints "Cannot delete key" on stderr
    /// for one it does not (an empty now-playing field that was never set, say).
    private static func removeProperty(_ key: String, of subject: jack_uuid_t, client: OpaquePointer) {
        var value: UnsafeMutablePointer<CChar>?
        var type: UnsafeMutablePointer<CChar>?
        let found = JackRequests.serialized { jack_get_property(subject, key, &value, &type) } == 0
        if let value { jack_free(value) }
        if let type { jack_free(type) }
        if found { _ = JackRequests.serialized { jack_remove_property(client, subject, key) } }
    }

    /// Control side. The metadata of every client open on the server (ours included) whose keys start
    /// with `prefix`: client name → key → value. Clients that closed are left out even where the server
    /// still keeps their properties. Empty when the host is not running.
    public func clientProperties(withPrefix prefix: String) -> [String: [String: String]] {
        let listing = listingOfCurrentStore() ?? listingInProcess(withPrefix: prefix)
        return clientProperties(withPrefix: prefix, from: listing)
    }

    /// The store as this process's libjack reads it (subject UUID text → key → value), keys starting
    /// with `prefix` only. Empty when the host is not running.
    private func listingInProcess(withPrefix prefix: String) -> [String: [String: String]] {
        withClientAndName { _, _ in
            var descriptions: UnsafeMutablePointer<jack_description_t>?
            let count = jack_get_all_properties(&descriptions)
            guard count > 0, let descriptions else { return [:] }
            defer {
                for i in 0..<Int(count) { jack_free_description(descriptions + i, 0) }
                jack_free(descriptions)
            }
            var listing: [String: [String: String]] = [:]
            for i in 0..<Int(count) {
                let description = descriptions[i]
                var properties: [String: String] = [:]
                for p in 0..<Int(description.property_cnt) {
                    let property = description.properties[p]
                    guard let key = property.key, let data = property.data else { continue }
                    let name = String(cString: key)
                    if name.hasPrefix(prefix) { properties[name] = String(cString: data) }
                }
                guard !properties.isEmpty else { continue }
                var text = [CChar](repeating: 0, count: Int(JACK_UUID_STRING_SIZE))
                jack_uuid_unparse(description.subject, &text)
                listing[text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }] = properties
            }
            return listing
        } ?? [:]
    }

    /// The properties in `listing` whose keys start with `prefix`, by the name of the open client that
    /// has them (closed clients and ports left out).
    func clientProperties(withPrefix prefix: String, from listing: [String: [String: String]])
        -> [String: [String: String]]
    {
        withClientAndName { client, _ in
            var result: [String: [String: String]] = [:]
            for (subject, properties) in listing {
                let matching = properties.filter { $0.key.hasPrefix(prefix) }
                guard !matching.isEmpty,
                    let name = JackRequests.serialized({ jack_get_client_name_by_uuid(client, subject) })
                else { continue }
                defer { jack_free(name) }
                result[String(cString: name)] = matching
            }
            return result
        } ?? [:]
    }

    /// Control side. Sets our metadata again when the store no longer has it. jackd keeps metadata in
    /// one store per user, which the clean exit of any server of the user deletes (`JackMetadataStore`).
    /// While this process's copy is live, one property is read in-process (no IPC); once it was
    /// deleted, our properties are written through `jack_property` to each new store file once, on the
    /// metadata queue. Returns true when it had to (the writing may still be under way), or when the
    /// last out-of-process listing of the store failed: the caller reads the peers again.
    public func refreshClientProperties() -> Bool {
        // Polled: while another thread holds the lock (a connection waits for jackd), the next poll looks.
        core.state.withLockIfAvailable { state -> Bool in
            guard !state.clientProperties.isEmpty, let session = state.session, let client = session.client,
                !session.isServerLost
            else { return false }
            if let write = staleStoreWrite(client: client, session: session, last: state.propertiesWrittenLast) {
                let retry = state.isListingRetryDue
                state.isListingRetryDue = false
                return queueRepair(write, state: &state) || retry
            }
            state.propertiesWrittenOutOfProcess = nil
            state.storeListing = nil
            guard let text = jack_client_get_uuid(client) else { return false }
            defer { jack_free(text) }
            var uuid = jack_uuid_t()
            guard jack_uuid_parse(text, &uuid) == 0 else { return false }
            let intact = state.clientProperties.allSatisfy { key, value in
                var stored: UnsafeMutablePointer<CChar>?
                var type: UnsafeMutablePointer<CChar>?
                let found = jack_get_property(uuid, key, &stored, &type) == 0
                defer {
                    if let stored { jack_free(stored) }
                    if let type { jack_free(type) }
                }
                return value.isEmpty ? !found : found && stored.map { String(cString: $0) } == value
            }
            if intact { return false }
            Self.applyProperties(
                state.clientProperties, removing: [], last: state.propertiesWrittenLast, client: client)
            return true
        } ?? false
    }

    /// Control side. Whether a client of that name is open on the server (one IPC).
    public func clientExists(_ name: String) -> Bool {
        withClientAndName { client, _ in
            guard let uuid = JackRequests.serialized({ jack_get_uuid_for_client_name(client, name) }) else {
                return false
            }
            jack_free(uuid)
            return true
        } ?? false
    }
}
