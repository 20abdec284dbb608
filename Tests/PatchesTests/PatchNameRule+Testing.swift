// Name rules for the reader's tests. The real rule is the engine's (SoundstageKit's PatchNameRule.engine).
import Patches

extension PatchNameRule {
    /// Accepts every name: for tests about everything else.
    static let unchecked = PatchNameRule { _, _ in nil }
    /// Refuses a name with a space, naming what and which: for tests of where the reader asks the rule.
    static let noSpaces = PatchNameRule { name, what in name.contains(" ") ? "\(what) '\(name)' has a space" : nil }
}
