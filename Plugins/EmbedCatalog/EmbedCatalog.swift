import Foundation
import PackagePlugin

/// Build tool plugin: turns `Sources/HomeModel/Catalog/hap-catalog.json`, the single source of
/// the HAP catalog, into Swift source that embeds it, at every build where the file changed.
@main
struct EmbedCatalog: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let input = target.directoryURL.appending(path: "Catalog/hap-catalog.json")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedCatalog.swift")
        return [
            .buildCommand(
                displayName: "Embedding the HAP catalog",
                executable: try context.tool(named: "catalog-embed").url,
                arguments: [input.path(), output.path()],
                inputFiles: [input],
                outputFiles: [output]
            ),
        ]
    }
}
