// Control side. Following a host sample-rate change without restarting the engine.
import AudioFiles
import AudioGraph
import Patches

extension LoadedPatch {
    /// The host now runs at `rate`: the engine adopts it, and every buffer the patch declared (files
    /// and generators) and every player `file` is rebuilt at the new rate and swapped in. Players using
    /// a rebuilt buffer rewind. Errors leave the old buffer in place and are returned, one per buffer.
    @discardableResult
    public func changeSampleRate(to rate: Double) -> [String] {
        var problems = engine.setSampleRate(rate)
        for buffer in document.buffers {
            do {
                try engine.addBuffer(try PatchLoader.makeBuffer(buffer, of: document, rate: rate))
            } catch {
                problems.append("buffer '\(buffer.name)': \(error)")
            }
        }
        for node in engine.nodes() where node.kind.isPlayer {
            guard let file = node.parameters[ParameterKey.file.name]?.stringValue, !file.isEmpty else { continue }
            do {
                try engine.set(node.name, "file", to: .string(file))
            } catch {
                problems.append("player '\(node.name)': \(error)")
            }
        }
        return problems
    }
}
