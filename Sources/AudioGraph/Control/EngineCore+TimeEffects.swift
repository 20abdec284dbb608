// Control side. The rules a graph with time effects must follow.

extension EngineCore {
    /// Why `connections` cannot render, or nil. A time effect (timepitch, varispeed) pulls its sources
    /// at its own rate, so everything upstream of it runs on its clock: (1) the live input cannot be
    /// upstream (JACK delivers capture at the server's pace, the effect would need more or less), and
    /// (2) nothing upstream may also feed a node outside the effect's chain (it would have to run at two
    /// rates at once). Fan-out after the effect is fine.
    ///
    /// An inserted time-pitch runs on the engine's clock and constrains nothing, except `clocking`: a
    /// node about to leave JACK is checked as the time effect it is about to become again.
    func timeDomainProblem(in connections: [Connection], clocking: String? = nil) -> String? {
        for (name, node) in state.graph.nodes.sorted(by: { $0.key < $1.key })
        where node.kind.isTimeEffect && (state.inserts.exposed[name] == nil || name == clocking) {
            var upstream: [String: String] = [:]  // ancestor → the node it feeds on the way to the effect
            var stack = connections.filter { $0.destination == name }.map { ($0.source, name) }
            while let (next, via) = stack.popLast() {
                guard upstream[next] == nil else { continue }
                upstream[next] = via
                stack += connections.filter { $0.destination == next }.map { ($0.source, next) }
            }
            for ancestor in upstream.keys.sorted() {
                if state.graph.nodes[ancestor]?.kind == .input {
                    let via = upstream[ancestor] ?? name
                    return "the live input '\(ancestor)' cannot feed the time effect '\(name)'"
                        + (via == name ? "" : " (through '\(via)')")
                        + ": a time effect pulls its input faster or slower than real time, and live input arrives in "
                        + "real time; use an effect without a clock of its own, or record the input first"
                }
                let outside = connections.filter {
                    $0.source == ancestor && $0.destination != name
                        && upstream[$0.destination] == nil
                }
                if let other = outside.first {
                    return
                        "'\(ancestor)' feeds the time effect '\(name)' and also '\(other.destination)': a time effect "
                        + "runs its sources at its own rate, so they cannot feed anything else; connect '\(name)' "
                        + "to '\(other.destination)' instead, or give the other path its own source"
                }
            }
        }
        return nil
    }
}
