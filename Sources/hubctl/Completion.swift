/// `hubctl completion bash|zsh`: a completion script built from the commands' own tables
/// (names, subcommands, options), so it never lists what hubctl would refuse.
enum Completion {
    static func script(for shell: String, commands: [any Command.Type]) -> String? {
        var cases = ""
        for command in commands {
            let subcommands = command.subcommands.map(\.0).joined(separator: " ")
            let options = (command.acceptedOptions.map(\.name) + Arguments.globalOptions.map(\.name))
                .joined(separator: " ")
            cases += "        \(command.name)) words_=\"\(subcommands) \(options)\" ;;\n"
        }
        let names = (commands.map { $0.name } + ["help", "completion"]).joined(separator: " ")
        let function = """
            _hubctl() {
                local current=${COMP_WORDS[COMP_CWORD]} command="" words_="" i
                for ((i = 1; i < COMP_CWORD; i++)); do
                    case ${COMP_WORDS[i]} in --url|--token|--data) ((i++)) ;; -*) ;; *) command=${COMP_WORDS[i]}; break ;; esac
                done
                case $command in
                    "") words_="\(names) \(Arguments.globalOptions.map(\.name).joined(separator: " "))" ;;
            \(cases)        help) words_="\(commands.map { $0.name }.joined(separator: " "))" ;;
                    completion) words_="bash zsh" ;;
                esac
                COMPREPLY=($(compgen -W "$words_" -- "$current"))
            }
            complete -o default -F _hubctl hubctl

            """
        switch shell {
        case "bash": return "# hubctl completion for bash: eval \"$(hubctl completion bash)\"\n" + function
        case "zsh":
            return "# hubctl completion for zsh: eval \"$(hubctl completion zsh)\"\n"
                + "autoload -U +X bashcompinit && bashcompinit\n" + function
        default: return nil
        }
    }
}
