// The `recorders:` section: read with locations, written back, and refused with located messages.
import Patches
import Testing

@Suite struct PatchRecorderTests {
    static let text = """
        version: 1
        nodes:
          - { name: p, kind: player }
        recorders:
          - name: take
            node: p
            path: takes/take1.flac
            encoding: int24
            duration: 12.5
          - { name: mix, node: main, path: mix.wav, record: false, format: caf }
        """

    @Test func recordersAreReadAndWrittenBack() throws {
        let document = try PatchParser.parse(text: Self.text, names: .unchecked)
        #expect(
            document.recorders.map { $0.withoutLocations() } == [
                PatchRecorder(name: "take", node: "p", path: "takes/take1.flac", encoding: "int24", duration: 12.5),
                PatchRecorder(name: "mix", node: "main", path: "mix.wav", format: "caf", record: false)
            ])
        #expect(document.recorders[0].nodeLocation == SourceLocation(line: 6, column: 11))
        let again = try PatchParser.parse(text: PatchWriter.yaml(document), names: .unchecked)
        #expect(again.withoutLocations().recorders == document.withoutLocations().recorders)
    }

    @Test func badRecordersAreReportedWhereTheyAre() {
        expectSingleError(
            "version: 1\nrecorders:\n  - { name: r, node: main }\n", at: 3, 5,
            "recorder is missing required key 'path'")
        expectSingleError(
            "version: 1\nrecorders:\n  - { name: r, node: main, path: a.wav, duration: 0 }\n", at: 3, 51,
            "'duration' must be more than 0 and at most 86400 seconds, found 0")
        expectSingleError(
            "version: 1\nrecorders:\n  - { name: r, node: main, path: a.wav, encoding: int8 }\n", at: 3, 51,
            "unknown encoding 'int8' (int16, int24 or float32)")
        let duplicate = diagnostics(
            of: "version: 1\nrecorders:\n  - { name: r, node: main, path: a.wav }\n"
                + "  - { name: r, node: main, path: b.wav }\n")
        #expect(duplicate.count == 1 && duplicate[0].message.contains("'r'"), "\(duplicate)")
    }
}
