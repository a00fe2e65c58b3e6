import Foundation
import PackagePlugin

/// Build tool plugin: turns every file of the target's `Assets` folder (the web page's HTML, CSS,
/// JavaScript, SVG, manifest and PNG icons) into Swift source that embeds it, so the binary
/// serves the page with no files beside it. Runs at every build where one of the files changed.
@main
struct EmbedAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let folder = target.directoryURL.appending(path: "Assets")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path()).filter { !$0.hasPrefix(".") }.sorted()
        let inputs = names.map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedAssets.swift")
        return [
            .buildCommand(
                displayName: "Embedding the web page's assets",
                executable: try context.tool(named: "asset-embed").url,
                arguments: [output.path()] + inputs.map { $0.path() },
                inputFiles: inputs,
                outputFiles: [output]
            ),
        ]
    }
}
