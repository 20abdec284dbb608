// Test support. Tests that need an outside tool (jackd, liblo-tools, sox, ffmpeg, python-osc, the built
// soundstage executable): skipped with the reason when it is missing, except under scripts/test.sh, which
// installs every such tool and sets SOUNDSTAGE_REQUIRE_TOOLS=1; there a missing tool fails the test.
import Foundation
import Testing

/// Whether the tools the set-up installs are required (SOUNDSTAGE_REQUIRE_TOOLS=1).
public enum RequiredTools {
    public static var areRequired: Bool { ProcessInfo.processInfo.environment["SOUNDSTAGE_REQUIRE_TOOLS"] == "1" }
}

/// A test (or, recursively, every test of a suite) that needs `tool`. When `isAvailable` is false the test is
/// skipped with `comment`, or, when tools are required, runs no further than a recorded failure naming the
/// tool. Use it in place of `.enabled(if: tool is there, …)`.
public struct ToolRequirement: TestTrait, SuiteTrait, TestScoping {
    public let tool: String
    let isAvailable: @Sendable () -> Bool
    let comment: Comment

    public var comments: [Comment] { [comment] }
    public var isRecursive: Bool { true }

    public func prepare(for test: Test) async throws {
        guard !RequiredTools.areRequired else { return }
        // The skip itself is ConditionTrait's (its reason shows as the test's skip comment).
        try await ConditionTrait.enabled(if: isAvailable(), comment).prepare(for: test)
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        guard test.isSuite || isAvailable() else {
            let reason =
                "\(tool) is missing, and SOUNDSTAGE_REQUIRE_TOOLS=1 makes that a failure, not a skip "
                + "(\(comment.rawValue))"
            Issue.record(Comment(rawValue: reason), sourceLocation: test.sourceLocation)
            return
        }
        try await function()
    }
}

extension Trait where Self == ToolRequirement {
    /// Needs `tool`: skipped with `comment` when `isAvailable` is false, failed instead under
    /// SOUNDSTAGE_REQUIRE_TOOLS=1.
    public static func requiresTool(
        _ tool: String, _ isAvailable: @autoclosure @escaping @Sendable () -> Bool,
        _ comment: Comment
    ) -> Self {
        ToolRequirement(tool: tool, isAvailable: isAvailable, comment: comment)
    }
}
