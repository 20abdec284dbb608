// Control side. The players an interruption paused, and resuming them.

/// The audio session's part of the control state.
struct SessionModel {
    var isInterrupted = false
    /// Players and audioplayers an interruption paused, by name.
    var pausedByInterruption: Set<String> = []
}

extension EngineCore {
    func beginInterruption() -> [String] {
        state.session.isInterrupted = true
        var paused: [String] = []
        for (name, record) in state.graph.nodes.sorted(by: { $0.key < $1.key })
        where (record.kind == .player || record.kind == .audioplayer) && record[.playing].boolValue == true {
            // A player that cannot be paused (freed meanwhile) is simply not remembered.
            if (try? pause(name)) != nil {
                paused.append(name)
                state.session.pausedByInterruption.insert(name)
            }
        }
        return paused
    }

    func endInterruption(shouldResume: Bool) -> [String] {
        defer {
            state.session.isInterrupted = false
            state.session.pausedByInterruption = []
        }
        guard shouldResume else { return [] }
        var resumed: [String] = []
        for name in state.session.pausedByInterruption.sorted() {
            guard let record = state.graph.nodes[name], record[.resumeAfterInterruption].boolValue != false,
                record[.playing].boolValue != true
            else { continue }
            if (try? play(name)) != nil { resumed.append(name) }
        }
        return resumed
    }
}
