// Control side. The engine's name rule, handed to the patch reader.
import AudioGraph
import Patches

extension PatchNameRule {
    /// The engine's rule (`NodeName`): a patch refuses, with line and column, exactly the names the
    /// engine and OSC refuse.
    public static let engine = PatchNameRule { name, what in NodeName.problem(name, what: what) }
}
