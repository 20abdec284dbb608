// Test helper. Compares what a JACK port carried with the offline render of a patch that loops one
// buffer: the capture starts anywhere in the loop, so it is lined up first.
enum LoopedRenderMatch {
    /// The largest difference between `captured` (every channel) and the periodic `reference` (one loop
    /// of `period` frames) at the lag that lines their samples up from frame 4800 on (leaving out the
    /// recorder's start); nil when no lag does.
    static func difference(_ captured: [[Float]], _ reference: [[Float]], period: Int) -> (lag: Int, error: Float)? {
        let start = 4_800
        guard let first = captured.first, first.count > start + 64 else { return nil }
        let lag = (0..<period).first { lag in
            (0..<32).allSatisfy { abs(first[start + $0] - reference[0][(start + $0 + lag) % period]) < 1e-6 }
        }
        guard let lag else { return nil }
        var error: Float = 0
        for channel in captured.indices {
            for i in start..<captured[channel].count {
                error = max(error, abs(captured[channel][i] - reference[channel][(i + lag) % period]))
            }
        }
        return (lag, error)
    }
}
