// Control side and the host's metadata queue. While this process's copy of the metadata store is a
// deleted one (`JackMetadataStore`), our properties are written, and the other clients' read, through
// `jack_property`. Each run is a process of its own that takes tens of milliseconds, so the runs
// happen on a serial queue (`JackHostCore.metadataQueue`), never on the caller's thread: the OSC
// service's loop, which sets and reads properties, does not wait for them.
import CJack
import Glibc

/// Metadata to write through `jack_property` because this process's copy of the store was deleted.
struct StaleStoreWrite: Sendable {
    let tool: JackMetadataStore.Tool
    /// Our client's UUID, as text.
    let subject: String
    /// Where the store file is (the deleted copy's path, where the current one is created).
    let storePath: String
    /// Keys written after all others, in this order.
    let last: [String]
    var properties: [String: String] = [:]
    var removed: Set<String> = []
    /// True when `properties` are all we keep (a repair), false for changes only.
    var isComplete = false

    func with(properties: [String: String], removed: Set<String>, isComplete: Bool = false) -> StaleStoreWrite {
        var write = self
        write.properties = properties
        write.removed = removed
        write.isComplete = isComplete
        return write
    }
}

extension JackHost {
    /// Under the state lock. What it takes to write our metadata out of process, when this process's
    /// copy of the store was deleted and `jack_property` is installed; nil otherwise.
    func staleStoreWrite(client: OpaquePointer, session: JackSession, last: [String]) -> StaleStoreWrite? {
        guard !session.isServerLost, let copy = JackMetadataStore.processCopy(), copy.isDeleted,
            let tool = JackMetadataStore.Tool(server: configuration.resolvedServerName),
            let text = jack_client_get_uuid(client)
        else { return nil }
        defer { jack_free(text) }
        return StaleStoreWrite(tool: tool, subject: String(cString: text), storePath: copy.path, last: last)
    }

    /// Hands `write` to the metadata queue (writes run in the order they were queued).
    func queue(_ write: StaleStoreWrite) {
        let core = core
        core.metadataQueue.async { Self.perform(write, core: core) }
    }

    /// Under the state lock. Queues the complete set (`write` with every property) unless the current
    /// store file already has it or a complete write is queued. Returns true when it queued one.
    func queueRepair(_ write: StaleStoreWrite, state: inout JackHostState) -> Bool {
        if state.isRepairQueued { return false }
        if let current = JackMetadataStore.identity(ofFileAt: write.storePath),
            current == state.propertiesWrittenOutOfProcess
        {
            return false
        }
        state.isRepairQueued = true
        queue(write.with(properties: state.clientProperties, removed: state.removalsNotLanded, isComplete: true))
        return true
    }

    /// Metadata queue. Writes `write` and records the store file it went to: a complete write that
    /// succeeded marks that file repaired; a failed write leaves none marked.
    private static func perform(_ write: StaleStoreWrite, core: JackHostCore) {
        // The tool fails both when the key is not there and when it was refused: only a listing tells.
        var notLanded: Set<String> = []
        for key in write.removed.sorted() where !write.tool.remove(subject: write.subject, key: key) {
            notLanded.insert(key)
        }
        if !notLanded.isEmpty {
            let listed = write.tool.listAll()?[write.subject]
            notLanded = notLanded.filter { listed?[$0] != nil || listed == nil }
        }
        var succeeded = notLanded.isEmpty
        for key in writeOrder(of: write.properties.keys, last: write.last) {
            let value = write.properties[key] ?? ""
            if value.isEmpty {
                _ = write.tool.remove(subject: write.subject, key: key)
            } else if !write.tool.set(subject: write.subject, key: key, value: value) {
                succeeded = false
            }
        }
        let identity = JackMetadataStore.identity(ofFileAt: write.storePath)
        core.state.withLock { state in
            if write.isComplete { state.isRepairQueued = false }
            state.removalsNotLanded.subtract(write.removed.subtracting(notLanded))
            state.removalsNotLanded.formUnion(notLanded.filter { state.clientProperties[$0] == nil })
            if !succeeded {
                state.propertiesWrittenOutOfProcess = nil
            } else if write.isComplete {
                state.propertiesWrittenOutOfProcess = identity
            }
        }
    }

    /// Control side. Every subject's properties in the current store (subject UUID text → key → value)
    /// while this process's copy is deleted; nil while it is live (read in-process then) or before a
    /// first listing arrived. A listing stays good until the property callback counts a change or the
    /// store file is another one (a deletion tells no one). Clients coming and going, which wake the
    /// peers' reading too, change who is open, which is asked of the server, not what the store holds.
    /// When the listing is out of date, a new one is queued and `.peersChanged` delivered once it is in;
    /// meanwhile the one before is returned.
    func listingOfCurrentStore() -> [String: [String: String]]? {
        // Relaxed: the callback's count orders nothing else.
        let changes = core.propertyChanges.load(ordering: .relaxed)
        let core = core
        return core.state.withLock { state -> [String: [String: String]]? in
            guard let session = state.session, let client = session.client,
                let stale = staleStoreWrite(client: client, session: session, last: [])
            else { return nil }
            let store = JackMetadataStore.identity(ofFileAt: stale.storePath)
            if let kept = state.storeListing, kept.changes == changes, kept.store == store, store != nil {
                return kept.listing
            }
            if !state.isListingQueued {
                state.isListingQueued = true
                core.metadataQueue.async {
                    let listing = stale.tool.listAll()
                    core.state.withLock { state in
                        state.isListingQueued = false
                        state.isListingRetryDue = listing == nil
                        if let listing { state.storeListing = (changes, store, listing) }
                    }
                    if listing != nil { core.deliver(.peersChanged) }
                }
            }
            return state.storeListing?.listing
        }
    }

    /// Returns once the metadata work queued before the call is done.
    func awaitMetadataWork() {
        core.metadataQueue.sync {}
    }
}
