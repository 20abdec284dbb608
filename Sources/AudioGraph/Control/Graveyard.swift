// Control side. Deferred release: objects the render thread may still touch are kept here until it
// provably cannot (openal-soft's mix-count idea, made explicit with two counters).

/// Holds references until the render thread has (a) installed a program at least as new as
/// `generation` and (b) settled every command below queue position `commandCount`: applied it, or
/// dropped it with a purge (`RenderEngine.settledCommandCount`). A timed command waiting in the render
/// thread's pending list is not settled, so whatever it points at stays alive until its frame has
/// passed. Both counters only grow, so an entry, once releasable, stays releasable.
struct Graveyard {
    private var entries: [(object: AnyObject, generation: Int, commandCount: Int)] = []

    mutating func bury(_ object: AnyObject, generation: Int, commandCount: Int) {
        entries.append((object, generation, commandCount))
    }

    /// Drops every entry the render thread can no longer reach. Returns how many were released.
    @discardableResult
    mutating func collect(installedGeneration: Int, settledCommands: Int) -> Int {
        let before = entries.count
        entries.removeAll { $0.generation <= installedGeneration && $0.commandCount <= settledCommands }
        return before - entries.count
    }

    var count: Int { entries.count }
}
