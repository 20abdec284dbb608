// Tests (control side). Why a file could not be created, as the user reads it: a read-only file system
// (a service's protected /etc) is not a permission problem.
@testable import AudioFiles
import Glibc
import Testing

@Suite struct OutputCreateErrorTests {
    @Test func aReadOnlyFileSystemIsNamedAsSuch() {
        let error = OutputDestination.createError(path: "/etc/soundstage/take.wav", errno: EROFS)
        #expect(error == .writeFailed(path: "/etc/soundstage/take.wav", reason: "its file system is read-only"))
        #expect(error.description.contains("read-only"), "\(error.description)")
        #expect(OutputDestination.createError(path: "a.wav", errno: EACCES) == .permissionDenied(path: "a.wav"))
    }
}
