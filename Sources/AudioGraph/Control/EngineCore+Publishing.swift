// Control side. Publishing: compiled programs and commands offered to the render thread, batches that
// reach it together, and deferred releases of what it may still see.
import AudioDSP

extension EngineCore {

    /// Compiles the current model and offers it to the render thread.
    func republish() {
        state.publishing.generation += 1
        var nodes = state.graph.nodes
        for (key, dying) in state.graph.dyingNodes { nodes[key] = dying.item }
        let program = GraphCompiler.compile(
            .init(
                nodes: nodes, connections: state.graph.connections + state.graph.retiringEdges.map(\.item.connection),
                fades: state.graph.fades.merging(state.graph.retiringEdges.map { ($0.item.connection, $0.item.fade) }) {
                    a, _ in a
                },
                taps: Array(state.monitors.taps.values), meters: Array(state.monitors.meters.values),
                inserts: state.inserts.exposed,
                voices: state.spatial.voices.mapValues(\.voice),
                maxBlockFrames: state.configuration.blockFrames,
                generation: state.publishing.generation))
        let previous = state.publishing.lastPublished
        if renderEngine.publish(program) != nil {
            // The render thread never took `previous`: nothing can reference it.
            _ = previous
        } else if let previous {
            state.publishing.graveyard.bury(previous, generation: program.generation, commandCount: 0)
        }
        state.publishing.lastPublished = program
        // Which players this program renders: a player it leaves out does not advance its timeline. Kept
        // until an install reports a later generation; bounded for an engine that never renders (the
        // render thread installs the newest program, so only the oldest can go unclaimed).
        state.players.publishedPlayers[program.generation] = Set(
            program.activeNodeNames.compactMap { name in
                nodes[name].flatMap { $0.player != nil ? $0.id : nil }
            })
        if state.players.publishedPlayers.count > 1_024, let oldest = state.players.publishedPlayers.keys.min() {
            state.players.publishedPlayers[oldest] = nil
        }
        // Objects the previous program referenced and the new one does not.
        for object in state.publishing.buryAfterPublish { bury(object) }
        state.publishing.buryAfterPublish = []
        // The render thread takes the program when it reaches this command, so a program and the commands
        // sent after it in one batch take effect in the same cycle.
        if openBatch.depth > 0 {
            state.publishing.batchNeedsProgram = true
        } else if renderEngine.commands.consumedCount >= state.publishing.lastTakeProgramCount {
            // Outside batches one pending take is enough: it takes whatever program is newest.
            if renderEngine.commands.push(TimedCommand(.takeProgram)) {
                state.publishing.lastTakeProgramCount = renderEngine.commands.producedCount
            }
        }
    }

    /// Enqueues commands; all or none. Inside a batch they are held until the batch ends. Throws
    /// `.busy` when the queue cannot take them.
    func send(_ commands: [TimedCommand]) throws(EngineError) {
        if openBatch.depth > 0 {
            for command in commands { hold(time: command.time, command.command) }
            return
        }
        try push(commands)
    }

    /// `send` for one command, without building an array.
    @inline(__always)
    func send(_ command: TimedCommand) throws(EngineError) {
        try send(time: command.time, command.command)
    }

    /// `send(TimedCommand(time: time, command))`. Inside a batch the command is built in the queue slot
    /// that holds it.
    @inline(__always)
    func send(time: Int64, _ command: @autoclosure () -> Command) throws(EngineError) {
        if openBatch.depth > 0 {
            hold(time: time, command())
            return
        }
        let timed = TimedCommand(time: time, command())
        guard renderEngine.commands.push(timed) else {
            throw EngineError(.busy, "the render thread is not keeping up (command queue full); try again")
        }
        noteTransport(timed, queuedCount: renderEngine.commands.producedCount)
    }

    /// After `timed` was queued as command number `queuedCount` (counting from 1): an immediate play,
    /// pause or stop makes its player's earlier render reports stale (`RenderEvent.playerTransport`).
    /// One timed for later does not: until it applies, the reports describe what plays.
    @inline(__always)
    func noteTransport(_ timed: TimedCommand, queuedCount: Int) {
        switch timed.command {
        case .playerPlay(let player), .playerPause(let player), .playerStop(let player):
            guard timed.time < 0 || timed.time <= Int64(renderEngine.renderedFrames) else { return }
            state.graph.nodesByID[player.pointee.nodeID]?.transportCommandCount = queuedCount
        default:
            return
        }
    }

    /// Holds a command in the open batch: written in place in the queue's next free slot, unpublished,
    /// or, once the queue has no room, kept after those in `batchCommands` (pushed when the batch ends if
    /// the queue has room by then).
    @inline(__always)
    private func hold(time: Int64, _ command: @autoclosure () -> Command) {
        let queue = renderEngine.commands
        let held = openBatch.held
        if held < openBatch.room || hasRoomForHeld(queue) {
            // A `TimedCommand` is trivial: its fields are written straight into the free slot.
            let slot = queue.reservedSlot(held)
            slot.pointee.time = time
            slot.pointee.command = command()
            openBatch.held = held + 1
            // A program taken with the batch goes first, one more: a report can only be later.
            noteTransport(slot.pointee, queuedCount: queue.producedCount + held + 1)
        } else {
            let timed = TimedCommand(time: time, command())
            state.publishing.batchCommands.append(timed)
            noteTransport(
                timed, queuedCount: queue.producedCount + openBatch.held + state.publishing.batchCommands.count)
        }
    }

    /// Whether the queue has a free slot for one more held command (reads the consumer's cursor again).
    private func hasRoomForHeld(_ queue: SPSCQueue<TimedCommand>) -> Bool {
        // Once a command waits in `batchCommands`, the later ones wait after it (their order is kept).
        guard state.publishing.batchCommands.isEmpty else { return false }
        openBatch.room = queue.freeCount
        return openBatch.held < openBatch.room
    }

    /// Pushes commands with one release, so the render thread sees all of them or none.
    private func push(_ commands: [TimedCommand]) throws(EngineError) {
        let queue = renderEngine.commands
        guard queue.capacity - queue.count >= commands.count else {
            throw EngineError(.busy, "the render thread is not keeping up (command queue full); try again")
        }
        let before = queue.producedCount
        _ = commands.withUnsafeBufferPointer { queue.push(contentsOf: $0) }
        for (index, command) in commands.enumerated() { noteTransport(command, queuedCount: before + index + 1) }
    }

    /// The command count the queue will have reached once everything sent so far (including a pending
    /// batch) is pushed: what deferred releases wait for.
    var sentCommandCount: Int {
        renderEngine.commands.producedCount
            + (openBatch.depth > 0 ? openBatch.held + state.publishing.batchCommands.count + 1 : 0)
    }

    /// Releases `object` once every command sent so far has settled (applied, or dropped by a purge)
    /// and the render thread runs the newest program. Timed commands still waiting for their frame that
    /// point into the object's render state are purged first, so they neither apply to a node that is
    /// gone nor hold its memory until their frame; a purge the queue cannot take changes nothing about
    /// safety (the graveyard waits for those commands instead).
    func bury(_ object: AnyObject) {
        if let owner = object as? CommandTargetOwner {
            for target in owner.commandTargets { try? send(TimedCommand(.purge(target))) }
        }
        state.publishing.graveyard.bury(object, generation: state.publishing.generation, commandCount: sentCommandCount)
    }

    /// Opens a batch (`Engine.batch`, or an edit of many parts such as `moveSources`): the commands and
    /// the program sent inside `body` reach the render thread together when the outermost batch ends.
    func batch<T>(_ body: () throws(EngineError) -> T) throws(EngineError) -> T {
        openBatch.depth += 1
        let result: Result<T, EngineError>
        do throws(EngineError) { result = .success(try body()) } catch { result = .failure(error) }
        openBatch.depth -= 1
        try commitBatchIfOutermost()
        return try result.get()
    }

    /// When no batch is open any more, publishes what the batches held (a program first), all at once.
    private func commitBatchIfOutermost() throws(EngineError) {
        guard openBatch.depth == 0 else { return }
        let takes = state.publishing.batchNeedsProgram
        state.publishing.batchNeedsProgram = false
        let held = openBatch.held
        openBatch.held = 0
        openBatch.room = 0
        // The waiting commands' storage is kept for the next batch.
        defer { state.publishing.batchCommands.removeAll(keepingCapacity: true) }
        let count = held + state.publishing.batchCommands.count + (takes ? 1 : 0)
        guard count > 0 else { return }
        let queue = renderEngine.commands
        // Nothing is published unless everything fits (the slots written in place are simply reused).
        guard queue.freeCount >= count else {
            throw EngineError(.busy, "the render thread is not keeping up (command queue full); try again")
        }
        if takes {
            // The program is taken first: the commands written in place move up one slot (a batch that
            // changes the graph; moves alone never do).
            var index = held
            while index > 0 {
                queue.reservedSlot(index).initialize(to: queue.reservedSlot(index - 1).pointee)
                index -= 1
            }
            queue.reservedSlot(0).initialize(to: TimedCommand(.takeProgram))
        }
        var offset = held + (takes ? 1 : 0)
        state.publishing.batchCommands.withUnsafeBufferPointer { waiting in
            for command in waiting {
                queue.reservedSlot(offset).initialize(to: command)
                offset += 1
            }
        }
        let before = queue.producedCount
        queue.commitReserved(count)
        if takes { state.publishing.lastTakeProgramCount = before + 1 }
    }
}
