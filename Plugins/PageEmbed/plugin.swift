// Embeds the page's files (web/) into TouchWeb at build time: page-embed turns every served file of web/
// (.html, .css, .js) into a Swift source of strings, which the build compiles with TouchWeb's own sources.
// The binary serves the page with no file beside it. A file added to web/ is found at the next build.
import Foundation
import PackagePlugin

@main
struct PageEmbed: BuildToolPlugin {
    /// The files of web/ the page is made of; the rest (the checker's tsconfig.json and .d.ts) is not served.
    static func served(_ name: String) -> Bool {
        !name.hasSuffix(".d.ts") && (name.hasSuffix(".html") || name.hasSuffix(".css") || name.hasSuffix(".js"))
    }

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let web = context.package.directoryURL.appending(path: "web")
        let names = try FileManager.default.contentsOfDirectory(atPath: web.path(percentEncoded: false))
            .filter(Self.served).sorted()
        let inputs = names.map { web.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "WebPageFiles.swift")
        return [.buildCommand(
            displayName: "Embedding the page's files (web/)",
            executable: try context.tool(named: "page-embed").url,
            arguments: [output.path(percentEncoded: false)] + inputs.map { $0.path(percentEncoded: false) },
            inputFiles: inputs,
            outputFiles: [output]
        )]
    }
}
