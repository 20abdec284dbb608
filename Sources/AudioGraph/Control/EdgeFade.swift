// Control side owns it; the render thread advances it. The fade of one connection into a mixer or
// the output, so connecting and disconnecting glide instead of clicking.
import AudioDSP

/// A connection's gain envelope: starts at 0 and glides to 1 when the connection is made; glides to 0
/// before the connection is removed from the program.
final class EdgeFade {
    let ramp: UnsafeMutablePointer<ParameterRamp>

    /// A fade that rises from silence over `frames` frames once a program containing it runs.
    init(risingOver frames: Int) {
        var r = ParameterRamp(0)
        r.ramp(to: 1, frames: frames)
        ramp = .allocate(capacity: 1)
        ramp.initialize(to: r)
    }

    deinit { ramp.deallocate() }
}

/// A connection or node on its way out: kept in programs until its fade has reached silence.
struct Retiring<Item> {
    var item: Item
    /// Commands sent when it started retiring; the fade-out command is among them.
    var commandCount: Int
    /// Engine frame after which it is silent, known once the render thread has taken the command.
    var dueFrame: Int?
}
