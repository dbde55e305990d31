import Testing

@testable import PushHub

/// DESIGN §16 rendering: what each client renders (declared, its build's profile, everything),
/// how a tree is rendered for it, and which clients share a rendition.
@Suite struct ComponentRenditionTests {
    static let tree = try! JSONReader.parse(
        #"""
        {"type":"Screen","children":[
          {"type":"Carousel","v":2,"items":[1],"fallback":{"type":"Carousel","items":[1],"fallback":{"type":"Text","text":"t"}}},
          {"type":"Map","fallback":{"type":"Text","text":"m"}},
          {"type":"Text","text":"x","v":"two"}]}
        """#)

    static func registry(profiles: [(String, String, [String: Int])] = []) throws -> ComponentRegistry {
        var registry = ComponentRegistry()
        for name in ["Carousel", "Text"] {
            registry.put(try Component(name: name, body: try JSONReader.parse(#"{"versions":{"1":{},"2":{}}}"#)), at: 1)
        }
        for (platform, version, components) in profiles {
            registry.put(
                AppProfile(
                    platform: platform, appVersion: SemanticVersion(version)!,
                    components: DeclaredComponents(components), updatedAt: 1))
        }
        return registry
    }

    static func rendered(_ capabilities: Capabilities) -> String {
        JSONWriter.string(Rendition.render(tree, for: RenderTarget(capabilities: capabilities)))
    }

    @Test("a node a client cannot render becomes its fallback, in turn, or goes; one it renders loses fallback")
    func rendering() throws {
        let registry = try Self.registry()
        let everything = registry.capabilities(platform: nil, appVersion: nil, declared: nil)
        // Map is not registered: it passes with its fallback. Text's "v" is not a version: no
        // client renders it, and it has no fallback.
        #expect(
            Self.rendered(everything)
                == #"{"children":[{"items":[1],"type":"Carousel","v":2},{"fallback":{"text":"m","type":"Text"},"type":"Map"}],"type":"Screen"}"#
        )
        let carouselOne = registry.capabilities(
            platform: "ios", appVersion: nil, declared: DeclaredComponents(["Carousel": 1, "Text": 1]))
        #expect(
            Self.rendered(carouselOne)
                == #"{"children":[{"items":[1],"type":"Carousel"},{"fallback":{"text":"m","type":"Text"},"type":"Map"}],"type":"Screen"}"#
        )
        let textOnly = registry.capabilities(
            platform: "ios", appVersion: nil, declared: DeclaredComponents(["Text": 1]))
        #expect(
            Self.rendered(textOnly)
                == #"{"children":[{"text":"t","type":"Text"},{"fallback":{"text":"m","type":"Text"},"type":"Map"}],"type":"Screen"}"#
        )
        // A type that only Swift's string equality holds equal to a registered name (KELVIN SIGN
        // for "K") is not that component: it passes, as validation treats it.
        var withK = registry
        withK.put(try Component(name: "K", body: try JSONReader.parse(#"{"versions":{"1":{}}}"#)), at: 1)
        let kelvin = JSONValue.object(["type": .string("\u{212A}"), "fallback": .string("f")])
        let none = withK.capabilities(platform: nil, appVersion: nil, declared: DeclaredComponents([:]))
        #expect(Rendition.render(kelvin, for: RenderTarget(capabilities: none)) == kelvin)
        #expect(
            Rendition.render(
                .object(["type": .string("K"), "fallback": .string("f")]), for: RenderTarget(capabilities: none))
                == .string("f"))
        // Nothing registered: the tree as it is (today's behaviour).
        #expect(Self.rendered(ComponentRegistry().latest) == JSONWriter.string(Self.tree))
    }

    @Test("what a client renders: its declaration, else the newest profile at or below its build, else everything")
    func resolution() throws {
        let registry = try Self.registry(profiles: [
            ("ios", "5.0.0", ["Text": 1]), ("ios", "5.2.0", ["Text": 1, "Carousel": 1]), ("android", "1.0.0", [:]),
        ])
        func limits(_ platform: String?, _ version: String?, _ declared: [String: Int]? = nil) -> [String: Int] {
            registry.capabilities(
                platform: platform, appVersion: version.flatMap(SemanticVersion.init),
                declared: declared.map(DeclaredComponents.init)
            ).limits
        }
        #expect(limits("ios", "4.9.0") == ["Carousel": 1000, "Text": 1000])
        #expect(limits("ios", "5.0.0") == ["Carousel": 0, "Text": 1])
        #expect(limits("ios", "5.1.9") == ["Carousel": 0, "Text": 1])
        #expect(limits("ios", "5.2.0-beta.1") == ["Carousel": 0, "Text": 1])
        #expect(limits("ios", "5.2.0") == ["Carousel": 1, "Text": 1])
        #expect(limits("ios", "9.0.0") == ["Carousel": 1, "Text": 1])
        #expect(limits("android", "2.0.0") == ["Carousel": 0, "Text": 0])
        #expect(limits("web", "2.0.0") == ["Carousel": 1000, "Text": 1000])
        #expect(limits("ios", nil) == ["Carousel": 1000, "Text": 1000], "without a version no profile applies")
        // A declaration wins over the profile, and names only what is registered.
        #expect(limits("ios", "5.0.0", ["Carousel": 2, "Lottie": 3]) == ["Carousel": 2, "Text": 0])
    }

    @Test("clients with equal capabilities share a rendition; the key only tells apart what the tree needs")
    func sharing() throws {
        let registry = try Self.registry()
        let version = ScreenVersion(name: "s", version: 1, tree: Self.tree, publishedAt: 0)
        var cache = RenditionCache()
        func key(_ declared: [String: Int]?, _ appVersion: String? = nil) -> RenditionKey {
            let capabilities = registry.capabilities(
                platform: nil, appVersion: appVersion.flatMap(SemanticVersion.init),
                declared: declared.map(DeclaredComponents.init))
            return cache.renditionKey(version, for: RenderTarget(capabilities: capabilities))
        }
        #expect(key(["Carousel": 2, "Text": 1]) == key(["Carousel": 5, "Text": 2]), "both render every need here")
        #expect(key(["Carousel": 2, "Text": 1]) == key(nil, "3.0.0"), "an app version without thresholds")
        #expect(key(["Carousel": 1, "Text": 1]) != key(["Carousel": 2, "Text": 1]))
        #expect(key(["Text": 1]) != key(["Carousel": 1, "Text": 1]))
        // Equal keys render equal trees.
        let a = registry.capabilities(platform: nil, appVersion: nil, declared: DeclaredComponents(["Carousel": 2]))
        let b = registry.capabilities(platform: nil, appVersion: nil, declared: DeclaredComponents(["Carousel": 9]))
        #expect(
            cache.rendered(version, for: RenderTarget(capabilities: a)).hash
                == cache.rendered(version, for: RenderTarget(capabilities: b)).hash)
        // Without a registry every client has the empty key and the tree as it is.
        let bare = ComponentRegistry().capabilities(platform: nil, appVersion: nil, declared: DeclaredComponents([:]))
        #expect(cache.renditionKey(version, for: RenderTarget(capabilities: bare)).components == [])
    }

    @Test("the dry run's substitutions are exactly the nodes rendering does not render")
    func substitutions() throws {
        let registry = try Self.registry()
        let textOnly = registry.capabilities(platform: nil, appVersion: nil, declared: DeclaredComponents(["Text": 1]))
        let found = Rendition.substitutions(in: Self.tree, for: textOnly)
        #expect(
            found.map { "\($0.pointer) \($0.outcome.rawValue)" } == [
                "/children/0 fallback", "/children/0/fallback fallback", "/children/2 removed",
            ])
        #expect(found[0].need == ComponentNeed(component: "Carousel", version: 2))
        #expect(found[2].need == ComponentNeed(component: "Text", version: Int.max))
        let everything = registry.capabilities(platform: nil, appVersion: nil, declared: nil)
        #expect(Rendition.substitutions(in: Self.tree, for: everything).map(\.pointer) == ["/children/2"])
    }

    @Test("the fallback report counts each client build once per node it does not render")
    func fallbackReport() throws {
        let registry = try Self.registry(profiles: [("ios", "5.0.0", ["Text": 1])])
        let builds: [ClientBuild: Int] = [
            ClientBuild(platform: "ios", appVersion: SemanticVersion("5.1.0"), declared: nil): 3,
            ClientBuild(platform: "ios", appVersion: SemanticVersion("4.0.0"), declared: nil): 2,
            ClientBuild(
                platform: "android", appVersion: nil, declared: DeclaredComponents(["Carousel": 1, "Text": 1])): 4,
        ]
        let report = FallbackReport.json(tree: Self.tree, builds: builds, registry: registry)
        #expect(report["clients"]?.intValue == 9)
        let places = report["fallbacks"]?.arrayValue ?? []
        func clients(_ pointer: String) -> Int? {
            places.first { $0["pointer"]?.stringValue == pointer }?["clients"]?.intValue
        }
        #expect(clients("/children/0") == 7)  // the 5.1.0 builds (profile) and the declared Carousel 1
        #expect(clients("/children/0/fallback") == 3)  // only the profile lacks Carousel 1
        #expect(clients("/children/2") == 9)  // "v":"two" is rendered by none
        #expect(places.first?["by_app"]?.arrayValue?.count == 2)
    }

    @Test("the fallback report lists nodes in document order, indexes as numbers")
    func reportOrder() throws {
        let registry = try Self.registry()
        let children = (0..<12).map { _ in JSONValue.object(["type": .string("Carousel"), "v": .number(2)]) }
        let tree = JSONValue.object([
            "a": .object(["type": .string("Text"), "v": .number(2)]), "children": .array(children),
        ])
        let builds = [
            ClientBuild(platform: nil, appVersion: nil, declared: DeclaredComponents(["Carousel": 1, "Text": 1])): 1
        ]
        let pointers = FallbackReport.json(tree: tree, builds: builds, registry: registry)["fallbacks"]?.arrayValue?
            .compactMap {
                $0["pointer"]?.stringValue
            }
        #expect(pointers == ["/a"] + (0..<12).map { "/children/\($0)" })
    }

    @Test("a build's platform finds its profile whatever its case; profiles are registered lowercase")
    func platformCase() throws {
        let registry = try Self.registry(profiles: [("ios", "5.0.0", ["Text": 1])])
        #expect(registry.profile("iOS", for: SemanticVersion("5.1.0"))?.platform == "ios")
        #expect(
            registry.capabilities(platform: "IOS", appVersion: SemanticVersion("5.1.0"), declared: nil).limits[
                "Carousel"] == 0)
    }

    @Test("declarations are checked as the protocol says")
    func declarations() throws {
        #expect(try DeclaredComponents(json: JSONReader.parse(#"{"Carousel":2,"a.b_c-1":1000}"#)).versions.count == 2)
        for bad in [
            #"[]"#, #"{"Carousel":0}"#, #"{"Carousel":1001}"#, #"{"Carousel":1.5}"#, #"{"bad name":1}"#, #"{"":1}"#,
        ] {
            #expect(throws: InputError.self) { try DeclaredComponents(json: JSONReader.parse(bad)) }
        }
        #expect(try DeclaredComponents(query: "Carousel:2,Text:1").versions == ["Carousel": 2, "Text": 1])
        #expect(try DeclaredComponents(query: "").versions == [:])
        for bad in ["Carousel", "Carousel:x", "Carousel:0", ":1", "a b:1"] {
            #expect(throws: InputError.self) { try DeclaredComponents(query: bad) }
        }
    }

    @Test("the interner shares equal objects and forgets freed ones, so it stays bounded")
    func interner() {
        var interner = Interner<DeclaredComponents>()
        let kept = interner.intern(DeclaredComponents(["A": 1]))
        #expect(interner.intern(DeclaredComponents(["A": 1])) === kept)
        for i in 0..<10_000 { _ = interner.intern(DeclaredComponents(["B": i % 1000 + 1, "C": i])) }
        #expect(interner.count < 200, "freed declarations were swept")
        #expect(interner.intern(DeclaredComponents(["A": 1])) === kept)
    }
}
