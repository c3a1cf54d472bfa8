package policy

import (
	"regexp"
	"slices"
	"strings"
)

// The sentence rules of the instruction detector, per language. They run on
// the phrase view (see phraseView): lower case, Latin accents removed
// ("instrucciones anteriores", "precedentes", "vorherigen", "instrucoes"),
// curly quotes straight, one space between words, split letters joined and
// leetspeak read.
//
// Each rule is a list of leads, the literal words a match starts with, and
// what must follow them (see phrase). Precision comes from what must
// follow: a verb alone is never enough. "Ignore" needs something like
// "previous instructions", "you are now" an AI role or a jailbreak word,
// "from now on" an instruction to obey or ignore, "do not tell" the user,
// "send" the conversation or a password and a URL. Ordinary sentences with
// the same verbs ("ignore the noise", "Alice forgot her umbrella", "send
// the slides to Bob", "from now on, reply in French") do not match, and
// narrative forms ("she ignored the previous instructions") mostly do not
// either, as the rules want the imperative.

// phrase builds a sentence rule: leads are the literal words a match starts
// with, rest the regular expression that must follow. In both, a space
// stands for an optional white space character: text whose letters were
// split by single spaces joins into words without gaps ("ignoreallprevious
// instructions"), and must match too. Leads that start with an ASCII letter
// must start a word, and a lead must end one unless split letters were
// joined there (tokenRule.glue). The expression holds only rest: the lead is
// found by comparing literals, which keeps the expression small and each
// run of it short.
func phrase(typ string, window int, leads []string, rest string) tokenRule {
	wordStart := isAlpha(leads[0][0])
	var ls []string
	for _, l := range leads {
		ls = append(ls, l)
		if strings.Contains(l, " ") {
			ls = append(ls, strings.ReplaceAll(l, " ", ""))
		}
	}
	// Longest first: the lead must be whole ("muestrame", not "muestra"
	// glued to "me").
	slices.SortStableFunc(ls, func(a, b string) int { return len(b) - len(a) })
	expr := strings.ReplaceAll("^(?:"+rest+")", " ", `\s?`)
	return tokenRule{
		typ:       typ,
		triggers:  minimalTriggers(ls),
		leads:     ls,
		firsts:    firstPairs(expr),
		wordStart: wordStart,
		window:    window,
		re:        regexp.MustCompile(expr),
		glue:      true,
	}
}

// withNear sets the literals one of which must be in a rule's window
// before its expression runs: a rule whose leads are common words ("add",
// "end") and that needs a URL is tried only near one.
func withNear(r tokenRule, near ...string) tokenRule {
	r.near = near
	return r
}

// minimalTriggers drops duplicates and every trigger that starts with
// another one: the rule's expression is tried at the shorter one's match
// anyway, and would be tried twice.
func minimalTriggers(ts []string) []string {
	var out []string
	for i, t := range ts {
		redundant := false
		for j, u := range ts {
			if j != i && strings.HasPrefix(t, u) && (len(u) < len(t) || j < i) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, t)
		}
	}
	return out
}

// roleEnd is what may follow a bare role word ("you are now DAN", "ahora
// eres una IA"): punctuation, the end, or one of the given words that
// continue the sentence (and, that, without …), but not a noun ("you are
// now an AI engineer").
func roleEnd(words string) string {
	return `(?:\s?(?:[,.!?;:。、]|(?:` + words + `)\b)|$)`
}

// Destinations data is sent to: a URL or an e-mail address.
const destURL = `(?:https?://|www\.|[a-z0-9._%+-]+@[a-z0-9-]+\.[a-z])`

// Japanese imperatives of ignoring and forgetting.
const jaIgnore = `(?:無視(?:して|しろ|せよ|しなさい|すること)|忘れ(?:て|ろ|なさい|ること)|破棄(?:して|しろ|せよ)|捨て(?:て|ろ)|従わ(?:ないで|ないこと|なくてよい|なくていい)|守ら(?:ないで|なくていい|なくてよい)|無効に(?:して|しろ|せよ))`

// phraseRules are all the sentence rules.
var phraseRules = newRuleSet(slicesConcat(
	englishRules, spanishRules, frenchRules, germanRules, portugueseRules,
	italianRules, dutchRules, russianRules, chineseRules, japaneseRules,
))

func slicesConcat(groups ...[]tokenRule) []tokenRule {
	var out []tokenRule
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

var englishRules = []tokenRule{
	phrase(InstructionIgnore, 256,
		[]string{"ignore", "disregard", "forget", "override", "bypass", "neglect", "discard", "abandon", "set aside",
			"throw out", "do not follow", "don't follow", "dont follow", "stop following", "pay no attention to", "never mind"},
		` (?:`+
			`(?:(?:all|any|each|every|the|your|these|those|of) ){0,4}(?:(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|existing|system|developer|safety|hidden) (?:(?:and|or|&|/) )?){1,3}`+
			`(?:instructions?|prompts?|directions|directives?|rules|guidelines|commands|constraints|guardrails|restrictions|programming|context|training|polic(?:y|ies))`+
			`|(?:all|everything|anything)(?: (?:of|that is|that was|written|stated|said))?(?: the)? (?:above|before|previously|prior|earlier)`+
			`|(?:everything|all) (?:you (?:know|were told|have been told|'ve been told|learned|have learned)|(?:your|the) (?:instructions|training|programming))`+
			`|(?:your|all(?: of)?(?: your| the)?) (?:instructions|guidelines|programming|training|directives|guardrails|system prompt|safety (?:rules|guidelines|filters|training))`+
			`|your (?:own )?(?:rules|restrictions|filters|limitations|limits|policies|principles|ethics|constraints|boundaries)`+
			`|(?:what|whatever|anything) you (?:were|have been|'ve been) (?:told|instructed)`+
			`|(?:the |any )?(?:instructions?|rules|guidelines) (?:above|you were given|you have been given|given to you)`+
			`)`),
	phrase(InstructionIgnore, 200,
		[]string{"disable", "deactivate", "turn off", "switch off", "circumvent", "bypass", "override", "evade", "get around",
			"work around", "remove", "lift", "ignore", "suspend", "break free of", "break free from"},
		` (?:all |any )?(?:of )?(?:`+
			`(?:your|the model's|the ai's|the assistant's) (?:(?:safety|content|ethical|moral|security|built-in|internal|own) ){0,2}(?:filters?|filtering|guardrails|restrictions|safeguards|limitations|limits|censorship|alignment|rules|guidelines|polic(?:y|ies)|protocols|principles|boundaries|ethics|programming|constraints)`+
			`|(?:the |these |those )?(?:safety|ethical|moral|ethics) (?:filters?|guardrails|restrictions|safeguards|checks|protocols|polic(?:y|ies)|guidelines|rules|constraints|mechanisms|training|layers?)`+
			`|(?:the |any |all )?(?:guardrails|safeguards|censorship|content (?:moderation|policy|policies))`+
			`)`),
	phrase(InstructionOverride, 220,
		[]string{"you are now", "you're now", "you are no longer", "you're no longer", "you are henceforth", "you will now be", "you shall now be"},
		` (?:(?:a|an|the|my|in|called|named|acting as|playing) )?(?:`+
			`(?:(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|free|unbound|unlimited|amoral|unethical|liberated|unchained|rebel) ){1,2}(?:ai|assistant|chatbot|bot|model|llm|language model|version|persona|character|entity|system|gpt)\b`+
			`|(?:new|different) (?:ai|llm|chatbot|language model|persona)\b`+
			`|(?:ai|llm|dan|stan|gpt|chatgpt|claude|gemini|language model)`+roleEnd(`and|that|who|which|with|without|named|called|free|now`)+
			`|jailbroken|unrestricted|unfiltered|uncensored|amoral|(?:developer|god|dan|jailbreak|unrestricted) mode`+
			`|(?:bound|restricted|limited|governed|constrained) by|(?:obligated|required|expected|programmed) to (?:follow|obey|comply|adhere|respect|refuse)`+
			`|free (?:from|of) (?:all |any |your )?(?:rules|restrictions|limits|limitations|guidelines|filters|constraints|guardrails|programming|censorship)`+
			`)`),
	phrase(InstructionOverride, 160,
		[]string{"you have been", "you've been"},
		` (?:jailbroken|(?:freed|liberated|released|unshackled) from (?:all |any |your |the )?(?:rules|restrictions|limits|limitations|guidelines|filters|constraints|guardrails|programming|censorship))`),
	phrase(InstructionOverride, 64,
		[]string{"new", "updated", "revised", "real", "actual", "true", "hidden", "secret", "override"},
		` (?:system (?:instructions?|prompt|directives?)\s?:|(?:instructions?|prompt|directives?)\s?:\s?`+
			`(?:you\b|your\b|ignore|disregard|forget|from now on|reveal|print|output|respond|answer|reply|act as|pretend|obey|the (?:assistant|ai|model)\b|assistant\b|ai\b`+
			`|send (?:every|all|your|the|me) ?(?:memor|conversation|chat|context|data|messages|history|secrets?|passwords?)))`),
	phrase(InstructionOverride, 200,
		[]string{"reveal", "print", "show", "output", "repeat", "leak", "dump", "override", "replace", "bypass", "ignore",
			"disregard", "forget", "change", "update", "display", "tell me", "give me", "write out", "spell out", "paste",
			"recite", "share", "what is", "what's", "echo"},
		` (?:me |us )?(?:(?:the|your|this|that|all|of|its|back|out|verbatim|exactly|in full|word for word) ){0,3}`+
			`(?:(?:original|initial|hidden|secret|real|current|previous|full|entire|whole|exact|complete|first|confidential|internal) ){0,2}`+
			`(?:system (?:prompt|message|instructions)|initial prompt|hidden (?:prompt|instructions)|instructions above|developer (?:prompt|message|instructions)|(?:pre-?)?prompt above`+
			`|(?:instructions|prompt|rules) you (?:were|have been) given|(?:confidential|secret|internal) instructions)`),
	phrase(InstructionOverride, 64,
		[]string{"new system prompt", "updated system prompt", "revised system prompt", "begin system prompt", "start of system prompt",
			"end of system prompt", "beginning of system prompt", "system prompt override", "system prompt update"},
		``),
	phrase(InstructionOverride, 40,
		[]string{"system prompt", "system override", "admin override", "developer override"},
		`\s?:`),
	phrase(InstructionOverride, 240,
		[]string{"from now on", "from this point on", "from this point forward", "from this moment on", "from here on",
			"henceforth", "going forward", "starting now", "for the rest of this conversation",
			"for the remainder of this conversation", "until further notice"},
		`,? (?:(?:you|always|will|must|should|shall|now|only|never|are|to|please|i want you to) ){0,4}(?:`+
			`(?:act|behave|pretend|roleplay|role-play|obey|ignore|disregard|comply|follow only|only follow|speak as|talk as)\b`+
			`|(?:respond|answer|reply) as (?:dan|an? (?:unrestricted|unfiltered|uncensored|evil|jailbroken)|if you (?:have|had) no)`+
			`|(?:never|not|do not|don't) (?:refuse|decline|say no|reject)`+
			`|(?:respond|answer|reply|speak|talk|write)(?: to (?:every|all|any)\w*(?: \w+)?)? (?:without|with no) (?:any )?(?:restrictions|filters|filtering|censorship|limits|limitations|rules|guidelines|ethics|morals)`+
			`|(?:include|add|append|insert|put|embed|end|start|begin|sign|prefix|suffix|mention)\b[^\n]{0,60}?(?:https?://|www\.|\blinks?\b|\burls?\b)`+
			`)`),
	phrase(InstructionOverride, 64,
		[]string{"developer mode", "dan mode", "god mode", "jailbreak mode"},
		` (?:enabled|activated|on|engaged|unlocked)\b`),
	phrase(InstructionOverride, 64,
		[]string{"do anything now"},
		``),
	phrase(InstructionOverride, 80,
		[]string{"enable", "activate", "enter", "switch to", "turn on", "engage", "unlock"},
		` (?:the )?(?:dan|god|jailbreak|jailbroken|unrestricted|unfiltered|evil|chaos) mode`),
	phrase(InstructionOverride, 160,
		[]string{"act as", "acting as", "pretend", "roleplay as", "role-play as", "role play as", "simulate", "behave as",
			"behave like", "impersonate", "play the role of"},
		` (?:to be |you are |you're |that you are |you have |there are |if you (?:are|were|have|had) |as if you (?:are|were|have|had) |like )?(?:an? |the )?(?:`+
			`(?:unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unethical|rogue|liberated|unbound|unshackled) `+
			`|dan\b`+
			`|(?:ai|assistant|model|chatbot|llm) (?:without|with no|free of|that has no|that has zero|with zero) (?:any )?(?:(?:ethical|moral|safety|content) )?(?:restrictions|filters|limits|rules|guidelines|ethics|censorship|limitations|boundaries|morals)`+
			`|no (?:(?:ethical|moral|safety|content) )?(?:rules|restrictions|limits|limitations|guidelines|filters|ethics|morals|boundaries|content policy)`+
			`)`),
	phrase(InstructionOverride, 64,
		[]string{"pretend"},
		` (?:to be|you are|you're) (?:the )?(?:system|developer)\b`),
	phrase(InstructionConceal, 200,
		[]string{"do not", "don't", "dont", "never", "must not", "should not", "shouldn't"},
		` (?:ever )?(?:`+
			`(?:tell|inform|alert|notify|warn|let) (?:the )?(?:user|human|operator|person you(?:'re| are) (?:talking|speaking|chatting) (?:to|with))s?(?: (?:about|know|that|of|what|anything|any of|where|why|how|you)|\s?[.!,;:]|$)`+
			`|(?:reveal|mention|disclose|say|show|explain|repeat|report|share|admit|confess)(?: (?:this|it|that|anything|any of this|these instructions|this instruction|this message|this note|the above|this memory))? to (?:the )?(?:user|human|operator)`+
			`)`),
	phrase(InstructionConceal, 120,
		[]string{"without"},
		` (?:(?:telling|informing|alerting|notifying|letting|warning) (?:the )?(?:user|human|operator)|the (?:user|human|operator) (?:knowing|noticing|seeing|being told|finding out|ever knowing))`),
	phrase(InstructionConceal, 120,
		[]string{"keep this", "keep it", "keep these", "keep that", "keep the above", "keep everything"},
		`(?: instructions?| messages?| notes?| memory| conversation)? (?:secret|hidden|confidential|private) from (?:the )?(?:user|human|operator)`),
	phrase(InstructionConceal, 100,
		[]string{"the user", "user"},
		` (?:must|should|shall) (?:not|never) (?:know|find out|learn|notice|be told|be informed|discover|suspect|be aware)`),
	phrase(InstructionConceal, 120,
		[]string{"hide", "conceal"},
		` (?:this|these|it|that|the above|everything)(?: instructions?| messages?| notes?)? from (?:the )?(?:user|human|operator)`),
	phrase(InstructionExfil, 320,
		[]string{"send", "post", "forward", "upload", "transmit", "exfiltrate", "leak", "email", "e-mail", "mail", "copy",
			"submit", "relay", "dump", "push"},
		` (?:me |us )?(?:(?:all|the|every|each|this|these|any|your|my|our|their|user's|users'|full|entire|whole|complete|current|previous|of|above|saved|stored|cached|remembered|collected) ){0,4}`+
			`(?:conversations?|(?:chat|conversation|message|browsing|search) (?:history|logs?)|chat|memor(?:y|ies)|context|system prompt|credentials|passwords?|api keys?|secrets?|tokens?|cookies|session(?: data| tokens?)?`+
			`|(?:personal|private|sensitive) (?:data|information|details)|(?:user|customer) (?:data|information|details)|everything (?:you know|above))`+
			`[^\n]{0,80}? (?:to|at|via|using|into|on|onto) (?:`+destURL+`|(?:this|the following|my|our|an?|the) (?:url|endpoint|webhook|server|address|link|e-?mail(?: address)?))`),
	withNear(phrase(InstructionOverride, 200,
		[]string{"include", "add", "append", "insert", "put", "embed", "place", "end"},
		`[^\n]{0,100}?(?:https?://|www\.)[^\n]{0,100}? (?:in|to|into|at the (?:end|start|bottom|top) of|under|after|before|with) (?:every|each|all|any|all of your|all your|your) (?:answers?|repl(?:y|ies)|responses?|messages?|outputs?|summar(?:y|ies)|emails?)\b`),
		"://", "www."),
	phrase(InstructionExfil, 240,
		[]string{"append", "encode", "include", "embed", "put", "add", "insert", "attach"},
		` (?:(?:the|all|this|these|any|your|user's|of|full|entire) ){0,3}(?:conversation|chat(?: history)?|memories|context|system prompt|(?:personal|user|private) data|passwords?|credentials|secrets)`+
			`[^\n]{0,60}? (?:in|into|to|as|inside) (?:the |a |an |this )?(?:url|query(?: string| parameters?)?|link|image(?: url| link| src)?|markdown image)`),
}

var spanishRules = []tokenRule{
	phrase(InstructionIgnore, 260,
		[]string{"ignora", "ignore", "ignoren", "ignorad", "olvida", "olvide", "olviden", "olvidad", "olvidate", "descarta", "descarte",
			"omite", "omita", "desestima", "desatiende", "no sigas", "no siga", "no obedezcas", "no obedezca", "no hagas caso",
			"haz caso omiso", "hagan caso omiso", "pasa por alto", "deja de lado"},
		` (?:a |de |del )?(?:(?:todas|todos|todo|toda|las|los|la|el|tus|vuestras|cualquier|cada|de|del|a|esas|estas) ){0,4}(?:`+
			`(?:instrucciones|indicaciones|ordenes|reglas|normas|directrices|directivas|pautas|consignas|comandos|restricciones|limitaciones|prompts?|politicas|salvaguardas)`+
			`(?: (?:de seguridad|del sistema|de sistema))?(?: (?:anteriores|previas|precedentes|de arriba|originales|iniciales|del sistema|de sistema|de seguridad|que (?:te )?(?:dieron|han dado|dio|di|recibiste|se te dieron)))`+
			`|(?:anteriores|previas|precedentes) (?:instrucciones|indicaciones|ordenes|reglas|directrices|normas)`+
			`|(?:tus|vuestras) (?:instrucciones|reglas|directrices|restricciones|normas|indicaciones)`+
			`|todo lo (?:anterior|de arriba|que (?:te )?(?:dijeron|han dicho|dije|sabes|has aprendido))`+
			`)`),
	phrase(InstructionIgnore, 220,
		[]string{"desactiva", "desactive", "elude", "evita", "evade", "salta", "saltate", "omite", "ignora", "anula", "elimina", "quita", "sortea"},
		` (?:(?:todos|todas|tus|los|las|el|la|tu) ){0,2}(?:`+
			`(?:filtros?|restricciones|limitaciones|salvaguardas|barreras|protecciones|politicas|reglas|normas|directrices|controles) (?:de seguridad|eticas?|morales|de contenido)`+
			`|(?:tus|tu) (?:filtros?|restricciones|limitaciones|salvaguardas|reglas eticas|normas eticas|directrices de seguridad|censura)`+
			`|censura)`),
	phrase(InstructionOverride, 260,
		[]string{"ahora eres", "a partir de ahora eres", "desde ahora eres", "de ahora en adelante eres", "ya no eres", "ahora seras",
			"eres ahora", "te conviertes en", "ahora te conviertes en"},
		` (?:un |una |el |la )?(?:`+
			`(?:ia|asistente|modelo|chatbot|bot|inteligencia artificial|llm)(?: de lenguaje)? (?:sin (?:restricciones|filtros|limites|censura|reglas|normas)|libre|liberad[oa]|malvad[oa]|desbloquead[oa]|sin ataduras)`+
			`|(?:ia|inteligencia artificial|modelo de lenguaje|dan|gpt|chatgpt|llm)`+roleEnd(`y|que|sin|con|llamad[oa]|libre`)+
			`|libre de (?:restricciones|reglas|limites|filtros|normas)|(?:en )?modo (?:desarrollador|dios|dan|sin restricciones)`+
			`)`),
	phrase(InstructionOverride, 200,
		[]string{"ya no"},
		` (?:estas|tienes que|debes|necesitas) (?:sujet[oa] a|obligad[oa] a|limitad[oa] por|restringid[oa] por|atad[oa] a|seguir|obedecer|respetar|cumplir) (?:a |por |con )?(?:ninguna |ningun |las |tus |sus |tu )?(?:reglas|normas|restricciones|directrices|politicas|instrucciones|filtros|limitaciones|programacion)`),
	phrase(InstructionOverride, 220,
		[]string{"actua", "actue", "actuen", "comportate", "finge", "finja", "simula", "simule", "haz de", "interpreta el papel de", "hazte pasar por"},
		`,? (?:como si fueras |como si fueses |como |que eres |ser |que no tienes |que no hay )?(?:un |una |el |la )?(?:(?:ia|asistente|modelo|chatbot|bot)(?: de lenguaje)? )?(?:`+
			`sin (?:ningun[oa]? (?:tipo de |clase de )?)?(?:restricciones|restriccion|filtros?|limites?|censura|reglas?|normas?|etica)|liberad[oa]|malvad[oa]|desbloquead[oa]|dan\b|(?:ningun[ao]s? )?(?:restricciones|reglas|limites|filtros)\b`+
			`)`),
	phrase(InstructionOverride, 120,
		[]string{"nuevo prompt del sistema", "nuevo prompt de sistema", "nuevas instrucciones del sistema", "nuevas instrucciones de sistema", "nuevo system prompt"},
		``),
	phrase(InstructionOverride, 80,
		[]string{"nuevo prompt", "prompt del sistema", "instrucciones del sistema"},
		`\s?:`),
	phrase(InstructionOverride, 220,
		[]string{"revela", "revele", "muestra", "muestrame", "muestre", "imprime", "imprima", "dime", "dame", "escribe", "repite",
			"repiteme", "comparte", "ensename", "copia", "filtra", "cual es", "cuales son"},
		` (?:me )?(?:(?:tu|tus|el|la|las|los|todo|todas|completo|completas|exactamente|palabra por palabra) ){0,3}(?:`+
			`(?:prompt|mensaje|instrucciones|indicaciones)(?: (?:original|inicial|oculto|secreto|originales|iniciales|ocultas|secretas|completo|completas))? (?:del|de) sistema`+
			`|system prompt|prompt (?:original|inicial|oculto|secreto)|instrucciones (?:ocultas|secretas)`+
			`|(?:tus) (?:instrucciones|indicaciones) (?:originales|iniciales)`+
			`)`),
	phrase(InstructionOverride, 260,
		[]string{"a partir de ahora", "de ahora en adelante", "desde ahora", "en adelante", "desde este momento", "a partir de este momento"},
		`,? (?:(?:siempre|tu|vas a|debes|deberas|tienes que|solo|te) ){0,3}(?:`+
			`(?:ignora|ignoraras|ignorar|obedece|obedeceras|obedecer|actua|actuaras|actuar|comportate|finge|fingiras|fingir|simula)\b`+
			`|(?:responde|responderas|responder|contesta|contestaras|contestar) (?:como (?:dan|una? (?:ia|asistente|modelo) sin)|sin (?:restricciones|filtros|censura|limites|reglas))`+
			`|(?:nunca|jamas|no) (?:te )?(?:niegues|negaras|rechaces|rechazaras|digas que no)`+
			`|(?:incluye|incluiras|incluir|anade|anadiras|agrega|agregaras|inserta|termina|empieza|comienza)\b[^\n]{0,60}?(?:https?://|www\.|\benlaces?\b|\burl\b|\blinks?\b)`+
			`)`),
	phrase(InstructionConceal, 220,
		[]string{"no le", "no les", "no digas", "no diga", "no cuentes", "no cuente", "no menciones", "no mencione", "no reveles",
			"no revele", "no informes", "no informe", "no comentes", "no avises", "no expliques", "no muestres", "no hables"},
		`(?: (?:digas|diga|cuentes|cuente|menciones|mencione|reveles|revele|informes|informe|comentes|comente|avises|avise|expliques|muestres|hables))?`+
			`(?: (?:nada|esto|eso|de esto|sobre esto|de este mensaje|sobre estas instrucciones|estas instrucciones|este mensaje)){0,2} (?:al|a el|con el) (?:usuario|humano|operador)`),
	phrase(InstructionConceal, 160,
		[]string{"sin que el usuario", "sin que el humano"},
		` (?:lo )?(?:sepa|note|vea|se entere|descubra|sospeche)`),
	phrase(InstructionConceal, 160,
		[]string{"sin decirle", "sin decirselo", "sin avisar", "sin avisarle", "sin informar", "sin informarle", "sin mencionarlo"},
		`(?: nada)? (?:al|el) (?:usuario|humano)`),
	phrase(InstructionConceal, 200,
		[]string{"oculta", "oculte", "esconde", "esconda", "ocultale", "ocultaselo", "manten", "mantenga", "guarda", "guarde"},
		` (?:esto|esta instruccion|estas instrucciones|este mensaje|todo esto|lo anterior)(?: (?:en secreto|oculto|en privado))? (?:al|del|para el|ante el|frente al) (?:usuario|humano)`),
	phrase(InstructionConceal, 160,
		[]string{"el usuario no"},
		` (?:debe|puede|tiene que|deberia|necesita) (?:nunca )?(?:saber|saberlo|enterarse|notar|descubrir|sospechar)`),
	phrase(InstructionExfil, 340,
		[]string{"envia", "envie", "enviad", "manda", "mande", "reenvia", "reenvie", "sube", "suba", "transmite", "transmita", "filtra",
			"exfiltra", "publica", "copia", "comparte"},
		` (?:me |nos )?(?:(?:todo|toda|todos|todas|el|la|los|las|tu|tus|su|sus|mis|este|esta|completo|completa|entero|entera|del|de|al|usuario) ){0,4}`+
			`(?:conversacion(?:es)?|historial(?: de (?:chat|conversacion|mensajes))?|chat|memorias|recuerdos|contexto|prompt del sistema|system prompt|contrasenas?|claves(?: de api)?|clave de api|credenciales|secretos|tokens?|cookies`+
			`|datos (?:personales|privados|del usuario|de la conversacion|sensibles)|informacion (?:personal|privada|del usuario|sensible))`+
			`[^\n]{0,80}? (?:a|al|hacia|para|en|por) (?:`+destURL+`|(?:esta|la siguiente|este|el siguiente|mi) (?:url|direccion|servidor|endpoint|webhook|enlace|correo))`),
}

var frenchRules = []tokenRule{
	phrase(InstructionIgnore, 260,
		[]string{"ignore", "ignorez", "ignorer", "oublie", "oubliez", "oublier", "ne tiens pas compte", "ne tenez pas compte",
			"ne tiens plus compte", "ne tenez plus compte", "ne suis pas", "ne suivez pas", "ne suis plus", "ne suivez plus",
			"fais abstraction", "faites abstraction", "laisse tomber", "laissez tomber", "neglige", "negligez", "passe outre",
			"passez outre", "ecarte", "ecartez"},
		` (?:de |des |a |aux |du )?(?:(?:toutes|tous|tout|les|la|le|l'|tes|vos|ces|de|des|du|aux|a) ){0,4}(?:`+
			`(?:l')?(?:instructions?|consignes?|directives?|regles?|indications?|ordres?|commandes?|prompts?|restrictions?|limitations?|politiques?|garde-fous|garde fous)`+
			`(?: (?:de securite|du systeme|systeme))?(?: (?:precedentes?|anterieures?|prealables?|ci-dessus|ci dessus|plus haut|initiales?|originales?|d'origine|du systeme|systeme|de securite|qu'on (?:t'a|vous a) donnees?|que (?:tu as|vous avez) recues?|donnees? (?:precedemment|auparavant|plus haut)))`+
			`|(?:tes|vos) (?:instructions|consignes|directives|regles|restrictions)\b`+
			`|tout ce qui (?:precede|est (?:ecrit|dit) (?:ci-dessus|ci dessus|plus haut|avant)|a ete dit (?:avant|auparavant|plus haut))`+
			`|tout ce (?:qu'on|que l'on) (?:t'a|vous a) (?:dit|appris|demande)|tout ce que (?:tu sais|vous savez)`+
			`)`),
	phrase(InstructionIgnore, 220,
		[]string{"desactive", "desactivez", "desactiver", "contourne", "contournez", "outrepasse", "outrepassez", "ignore", "ignorez",
			"supprime", "supprimez", "leve", "levez", "enleve", "enlevez", "passe outre", "passez outre"},
		` (?:a |aux )?(?:(?:tous|toutes|tes|vos|les|le|la|ton|votre|ta) ){0,2}(?:`+
			`(?:filtres?|restrictions|limitations|garde-fous|garde fous|protections|barrieres|regles|politiques|consignes|mesures) (?:de securite|ethiques?|morales?|de contenu|de moderation)`+
			`|(?:tes|vos|ton|votre|ta) (?:filtres?|restrictions|limitations|garde-fous|garde fous|regles ethiques|protections|censure)`+
			`|censure)`),
	phrase(InstructionOverride, 260,
		[]string{"tu es maintenant", "vous etes maintenant", "tu es desormais", "vous etes desormais", "desormais tu es",
			"desormais vous etes", "a partir de maintenant tu es", "a partir de maintenant vous etes", "tu n'es plus", "vous n'etes plus",
			"maintenant tu es", "maintenant vous etes", "tu deviens", "vous devenez"},
		` (?:un |une |le |la |l')?(?:`+
			`(?:ia|assistant|assistante|modele|chatbot|bot|intelligence artificielle|llm)(?: de langage)? (?:sans (?:restrictions?|filtres?|limites?|censure|regles?|limitations?)|libre|liberee?|malveillante?|debridee?)`+
			`|(?:ia|intelligence artificielle|modele de langage|dan|gpt|chatgpt|llm)`+roleEnd(`et|qui|sans|avec|nommee?|appelee?|libre`)+
			`|libre de (?:toute|toutes|tout) (?:restrictions?|regles?|limites?|contraintes?)|(?:en )?mode (?:developpeur|dieu|dan|sans restriction)`+
			`|(?:soumise?|tenue?|obligee?|limitee?|contrainte?) (?:a|aux|par) (?:tes|vos|les|aucune|ces|des) (?:regles|restrictions|consignes|directives|limitations|politiques)`+
			`)`),
	phrase(InstructionOverride, 220,
		[]string{"agis", "agissez", "comporte-toi", "comportez-vous", "comporte toi", "fais comme si", "faites comme si", "fais semblant",
			"faites semblant", "joue le role", "jouez le role", "simule", "simulez", "incarne", "incarnez", "pretends", "pretendez"},
		`,? (?:comme |d'etre |que tu es |que vous etes |de |d'|le role (?:d'|de )|si tu etais |si vous etiez |si tu n'avais |si vous n'aviez |tu n'avais |vous n'aviez |qu'il n'y a )?(?:un |une |le |la |l')?(?:(?:ia|assistant|modele|chatbot|bot)(?: de langage)? )?(?:`+
			`sans (?:restrictions?|filtres?|limites?|censure|regles?|limitations?|ethique)|debridee?|malveillante?|liberee?|dan\b|(?:aucune|pas de|plus de) (?:restrictions?|regles?|limites?|filtres?|limitations?)`+
			`)`),
	phrase(InstructionOverride, 120,
		[]string{"nouveau prompt systeme", "nouveau prompt du systeme", "nouvelles instructions systeme", "nouvelles instructions du systeme",
			"nouvelles consignes systeme", "nouveau system prompt"},
		``),
	phrase(InstructionOverride, 80,
		[]string{"nouveau prompt", "prompt systeme", "prompt du systeme", "instructions systeme", "instructions du systeme"},
		`\s?:`),
	phrase(InstructionOverride, 220,
		[]string{"revele", "revelez", "montre", "montrez", "montre-moi", "affiche", "affichez", "imprime", "imprimez", "dis-moi",
			"dites-moi", "donne-moi", "donnez-moi", "repete", "repetez", "ecris", "ecrivez", "partage", "partagez", "quel est", "quelles sont"},
		` (?:moi )?(?:(?:ton|ta|tes|votre|vos|le|la|les|l'|tout|toutes|integralement|exactement|mot pour mot) ){0,3}(?:`+
			`(?:prompt|message|instructions|consignes)(?: (?:original|initial|cache|secret|originales|initiales|cachees|secretes|complet|completes))? (?:du )?systeme`+
			`|system prompt|prompt (?:original|initial|cache|secret)|instructions (?:cachees|secretes)`+
			`|(?:tes|vos) (?:instructions|consignes) (?:originales|initiales|de depart)`+
			`)`),
	phrase(InstructionOverride, 260,
		[]string{"a partir de maintenant", "desormais", "dorenavant", "a partir d'aujourd'hui", "des maintenant", "a compter de maintenant"},
		`,? (?:(?:tu|vous|toujours|devras|devrez|dois|devez|vas|allez|ne|n'|seulement|jamais) ){0,3}(?:`+
			`(?:ignore|ignoreras|ignorez|ignorerez|ignorer|obeis|obeiras|obeissez|obeir|agis|agiras|agissez|agir|comporte-toi|fais semblant|feras semblant|simule|simuleras)\b`+
			`|(?:reponds|repondras|repondez|repondre) (?:comme (?:dan|une? (?:ia|assistant) sans)|sans (?:restrictions?|filtres?|censure|limites?|regles?))`+
			`|(?:refuse|refuseras|refusez|refuser)(?:as)? (?:jamais|rien)|jamais (?:refuser|de refus)`+
			`|(?:inclus|incluras|ajoute|ajouteras|ajoutez|insere|insereras|termine|commence)\b[^\n]{0,60}?(?:https?://|www\.|\bliens?\b|\burl\b)`+
			`)`),
	phrase(InstructionConceal, 220,
		[]string{"ne dis", "ne dites", "ne le dis", "ne le dites", "ne mentionne", "ne mentionnez", "ne revele", "ne revelez", "ne raconte",
			"ne racontez", "ne signale", "ne signalez", "n'en parle", "n'en parlez", "ne parle", "ne parlez", "ne montre", "ne montrez",
			"n'informe", "n'informez", "ne previens", "ne prevenez"},
		`(?: (?:rien|pas|jamais|cela|ca|ceci|de ceci|de cela|de tout cela|de tout ceci|de tout ca|tout cela|tout ceci|cette instruction|ces instructions|ce message|en)){0,3} (?:a l'|a l |aux )(?:utilisateur|utilisatrice|humain|operateur)s?`),
	phrase(InstructionConceal, 200,
		[]string{"n'informe pas", "n'informez pas", "ne previens pas", "ne prevenez pas", "ne dis rien", "ne dites rien"},
		` (?:l'|l )(?:utilisateur|utilisatrice|humain)`),
	phrase(InstructionConceal, 160,
		[]string{"sans que l'utilisateur", "sans que l utilisateur", "sans que l'utilisatrice", "sans que l'humain"},
		` (?:ne )?(?:le |s'en |en )?(?:sache|remarque|voie|apprenne|decouvre|se doute|rende compte|apercoive)`),
	phrase(InstructionConceal, 160,
		[]string{"sans le dire", "sans en parler", "sans prevenir", "sans informer", "sans le signaler", "sans le mentionner"},
		` (?:a l'|a l |l'|l )(?:utilisateur|utilisatrice|humain)`),
	phrase(InstructionConceal, 200,
		[]string{"cache", "cachez", "dissimule", "dissimulez", "garde", "gardez"},
		` (?:ceci|cela|ca|cette instruction|ces instructions|ce message|tout ceci|tout cela)(?: (?:secret|secrete|cache))? (?:a l'|a l |de l'|de l |aux )(?:utilisateur|utilisatrice|humain)s?`),
	phrase(InstructionConceal, 160,
		[]string{"l'utilisateur ne", "l utilisateur ne", "l'utilisatrice ne", "l'humain ne"},
		` (?:doit|devra|peut|faut) (?:jamais |pas |rien )?(?:le |en |s'en )?(?:savoir|rien savoir|apprendre|remarquer|decouvrir|se douter|rendre compte)`),
	phrase(InstructionExfil, 340,
		[]string{"envoie", "envoyez", "transmets", "transmettez", "transfere", "transferez", "televerse", "televersez", "publie",
			"publiez", "copie", "copiez", "partage", "partagez", "exfiltre", "exfiltrez", "fais fuiter", "poste", "postez", "uploade"},
		` (?:moi |nous )?(?:(?:toute|tout|tous|toutes|la|le|les|l'|ton|ta|tes|votre|vos|mon|ma|mes|cette|ce|entiere|complete|de|du|des|d'|utilisateur) ){0,4}`+
			`(?:conversations?|historique(?: (?:de (?:la )?(?:conversation|discussion|chat)|des messages))?|discussion|chat|memoires?|souvenirs|contexte|prompt systeme|system prompt|mots de passe|mot de passe|cles(?: d'api| api)?|cle d'api|identifiants|secrets|jetons|tokens?|cookies`+
			`|donnees (?:personnelles|privees|de l'utilisateur|sensibles|de la conversation)|informations (?:personnelles|privees|de l'utilisateur|sensibles))`+
			`[^\n]{0,80}? (?:a|au|vers|sur|via|par|dans) (?:`+destURL+`|(?:cette|l'|la|le|mon|ma) ?(?:url|adresse|serveur|endpoint|webhook|lien|e-?mail)(?: suivante?)?)`),
}

var germanRules = []tokenRule{
	phrase(InstructionIgnore, 280,
		[]string{"ignoriere", "ignorier", "ignorieren", "vergiss", "vergesst", "vergessen sie", "missachte", "missachten", "verwirf", "verwerfen"},
		` (?:sie )?(?:(?:alle|alles|die|deine|ihre|jegliche|jede|samtliche|der|den|vorher|zuvor) ){0,3}(?:`+
			`(?:(?:vorherigen?|vorigen?|vorangegangenen?|vorangehenden?|bisherigen?|fruheren?|frueheren?|obigen?|oben genannten|oberen|ursprunglichen?|urspruenglichen?|ersten|gegebenen|erhaltenen|system|sicherheits) ){1,2}`+
			`(?:anweisungen|anweisung|instruktionen|befehle|regeln|vorgaben|richtlinien|prompts?|anordnungen|hinweise|einschrankungen|einschraenkungen|beschrankungen|systemanweisungen|systemprompts?)`+
			`|(?:deine|ihre|all deine|alle deine|alle ihre) (?:anweisungen|instruktionen|regeln|vorgaben|richtlinien|programmierung|einschrankungen|einschraenkungen|systemanweisungen|systemprompt)`+
			`|alles,? (?:was )?(?:(?:dir|ihnen) )?(?:vorher|zuvor|bisher|oben|davor) (?:gesagt|geschrieben|stand|steht|gesagt wurde|mitgeteilt|angewiesen)`+
			`|alles (?:oben |vorher |davor )?(?:stehende|gesagte|geschriebene|obige|vorherige|bisherige)`+
			`|(?:die|alle) (?:anweisungen|regeln|vorgaben) (?:oben|von oben|davor)`+
			`)`),
	phrase(InstructionIgnore, 240,
		[]string{"befolge", "befolgen sie", "beachte", "beachten sie", "folge", "gehorche"},
		` (?:(?:den|die|deine|der|ihren|ihre|alle) ){0,2}(?:(?:vorherigen?|bisherigen?|obigen?|fruheren?|ursprunglichen?|alten|ersten) )?(?:anweisungen|regeln|instruktionen|vorgaben|richtlinien|befehle) (?:nicht|nie) ?(?:mehr|langer|laenger)?`),
	phrase(InstructionIgnore, 200,
		[]string{"halte dich nicht", "halt dich nicht", "halten sie sich nicht"},
		`(?: mehr| langer| laenger)? an (?:die |deine |ihre |irgendwelche )?(?:vorherigen? |bisherigen? |obigen? )?(?:anweisungen|regeln|vorgaben|richtlinien|instruktionen|einschrankungen)`),
	phrase(InstructionIgnore, 220,
		[]string{"deaktiviere", "deaktivier", "deaktivieren sie", "umgehe", "umgeh", "umgehen sie", "schalte", "schalt", "hebe", "entferne",
			"ignoriere", "setze dich uber", "setz dich uber", "setze dich ueber", "setz dich ueber"},
		` (?:(?:alle|deine|ihre|die|samtliche|jegliche|den|dein|ihren|deinen) ){0,2}(?:`+
			`(?:sicherheitsfilter|sicherheitsrichtlinien|sicherheitsregeln|sicherheitsvorkehrungen|sicherheitsmechanismen|sicherheitsbeschrankungen|sicherheitsbeschraenkungen|inhaltsfilter|schutzmechanismen|zensur|schutzvorkehrungen|leitplanken|ethischen (?:richtlinien|grundsatze|regeln|schranken|grenzen))`+
			`|(?:deine|ihre|deinen|ihren|dein) (?:filter|einschrankungen|einschraenkungen|beschrankungen|beschraenkungen|richtlinien|grenzen|regeln))`),
	phrase(InstructionOverride, 280,
		[]string{"du bist jetzt", "du bist nun", "du bist ab jetzt", "du bist ab sofort", "du bist von nun an", "ab jetzt bist du",
			"ab sofort bist du", "von nun an bist du", "jetzt bist du", "nun bist du", "du bist kein", "du bist keine", "du bist nicht mehr",
			"sie sind jetzt", "sie sind nun", "sie sind nicht mehr", "du wirst jetzt zu", "du wirst zu"},
		` (?:ein |eine |einer |der |die |das |im |in )?(?:`+
			`(?:ki|assistent|assistentin|modell|sprachmodell|chatbot|bot|llm) (?:ohne (?:einschrankungen|einschraenkungen|beschrankungen|filter|regeln|grenzen|zensur|limits)|mehr)\b`+
			`|(?:uneingeschrankte|uneingeschraenkte|ungefilterte|unzensierte|bose|boese|freie|befreite|entfesselte|gehackte)[rsn]? (?:ki|assistent|assistentin|modell|sprachmodell|chatbot|bot|version)`+
			`|(?:ki|sprachmodell|dan|gpt|chatgpt|llm)`+roleEnd(`und|die|der|das|ohne|mit|namens|frei|mehr`)+`|(?:im |in )?(?:entwicklermodus|developer mode|dan-modus|dan modus|gottmodus|god mode)`+
			`|(?:mehr |langer |laenger )?an (?:deine |ihre |die |irgendwelche |keine )?(?:regeln|richtlinien|einschrankungen|einschraenkungen|vorgaben|anweisungen) gebunden`+
			`|frei von (?:allen |jeglichen )?(?:regeln|einschrankungen|einschraenkungen|beschrankungen|richtlinien|filtern|grenzen)`+
			`)`),
	phrase(InstructionOverride, 220,
		[]string{"verhalte dich", "verhalt dich", "tu so", "tue so", "spiele die rolle", "spiel die rolle", "gib dich als", "gib vor",
			"agiere als", "agier als", "handle als", "simuliere", "stell dir vor"},
		`,? (?:als ob du |als ob |als |wie |dass du |du seist |du warst |du waerst )?(?:(?:ein|eine|einen|der|die|das) )?(?:(?:ki|assistent|modell|sprachmodell|chatbot|bot) )?(?:`+
			`ohne (?:einschrankungen|einschraenkungen|beschrankungen|beschraenkungen|filter|regeln|grenzen|zensur|ethik|richtlinien)`+
			`|(?:uneingeschrankt|uneingeschraenkt|ungefiltert|unzensiert|bose|boese|entfesselt|befreit)e?[rsn]? (?:ki|assistent|modell|sprachmodell|chatbot|bot)`+
			`|dan\b|(?:du )?(?:hattest|haettest|hast|hatt?est) (?:du )?keine (?:einschrankungen|einschraenkungen|regeln|grenzen|filter|richtlinien)`+
			`)`),
	phrase(InstructionOverride, 120,
		[]string{"neuer systemprompt", "neuer system-prompt", "neuer system prompt", "neue systemanweisungen", "neue systemanweisung",
			"neue systemnachricht"},
		``),
	phrase(InstructionOverride, 80,
		[]string{"systemprompt", "systemanweisung", "systemanweisungen", "neuer prompt"},
		`\s?:`),
	phrase(InstructionOverride, 220,
		[]string{"zeige", "zeig", "gib", "nenne", "nenn", "verrate", "verrat", "wiederhole", "wiederhol", "drucke", "druck", "schreibe",
			"schreib", "kopiere", "teile", "offenbare", "enthulle", "enthuelle", "was ist", "was steht in"},
		` (?:sie )?(?:mir )?(?:(?:deinen|deine|dein|ihren|ihre|ihr|den|die|das|mal|bitte|vollstandig|vollstaendig|genau|komplett|wortlich|woertlich) ){0,4}(?:`+
			`system-?prompt|system-?nachricht|system-?anweisungen|system prompt|systemanweisung`+
			`|(?:deine|ihre|deinen|ihren) (?:ursprunglichen?|urspruenglichen?|versteckten?|geheimen?|anfanglichen?|anfaenglichen?|initialen?|internen?) (?:anweisungen|prompt|instruktionen)`+
			`)`),
	phrase(InstructionOverride, 280,
		[]string{"ab jetzt", "ab sofort", "von nun an", "von jetzt an", "ab heute", "kunftig", "kuenftig", "zukunftig", "zukuenftig", "fortan"},
		`,? (?:(?:wirst|sollst|musst|du|sie|werden|sollen|mussen|muessen|immer|stets|nur) ){0,4}(?:`+
			`(?:ignorierst|ignorieren|ignoriere|gehorchst|gehorchen|gehorche|verhaltst|verhaeltst|verhalte|tust so|spielst|simulierst)\b`+
			`|(?:antwortest|antworten|antworte) (?:ohne (?:einschrankungen|einschraenkungen|filter|zensur|regeln|grenzen)|als dan)`+
			`|(?:nie|niemals|nichts)(?: mehr)?(?: etwas)? (?:ablehnen|verweigern|ab|zuruckweisen)|(?:lehnst|verweigerst) (?:du )?(?:nie|niemals|nichts)`+
			`|(?:fugst|fuegst|fuge|fuege|haengst|hangst)\b[^\n]{0,60}?(?:https?://|www\.|\blinks?\b|\burl\b)`+
			`)`),
	phrase(InstructionConceal, 200,
		[]string{"sag", "sage", "sagen sie", "erzahl", "erzaehl", "erzahle", "erzaehle", "erwahne", "erwaehne", "erwahn", "verrate", "verrat"},
		` (?:es |das |dies |davon |hiervon |nichts |diese anweisung |diese nachricht )?(?:dem|den|gegenuber dem|gegenueber dem) (?:benutzer|nutzer|anwender|user)(?:in|n)? (?:nicht|nichts|kein wort|davon nichts)`),
	phrase(InstructionConceal, 180,
		[]string{"ohne dass der", "ohne dass die"},
		` (?:benutzer|nutzer|anwender|user)(?:in)? (?:es |das |davon |etwas )?(?:merkt|weiss|erfahrt|erfaehrt|bemerkt|mitbekommt|sieht|ahnt)`),
	phrase(InstructionConceal, 180,
		[]string{"der benutzer", "der nutzer", "der anwender", "der user", "die benutzerin", "die nutzerin"},
		` (?:darf|soll|muss) (?:das |dies |davon |es |hiervon )?(?:nicht|nichts|nie|niemals) (?:davon )?(?:wissen|erfahren|merken|mitbekommen|bemerken|ahnen)`),
	phrase(InstructionConceal, 180,
		[]string{"verheimliche", "verschweige", "verberge", "verstecke", "halte"},
		` (?:das |dies |es |diese anweisung |diese nachricht |alles )?(?:vor )(?:dem|den) (?:benutzer|nutzer|anwender|user)(?:n)?`),
	phrase(InstructionExfil, 360,
		[]string{"sende", "send", "schicke", "schick", "ubermittle", "uebermittle", "ubertrage", "uebertrage", "lade", "leite", "poste",
			"exfiltriere", "kopiere", "senden sie", "schicken sie"},
		` (?:(?:den|die|das|alle|alles|gesamten?|ganzen?|komplette[nr]?|deine[nr]?|meine[nr]?|bisherigen?|des|der|benutzers|nutzers|gespeicherten?|gesicherten?|hinterlegten?|gemerkten?) ){0,4}`+
			`(?:gesprachs?verlauf|gespraechs?verlauf|chatverlauf|chat-verlauf|verlauf|unterhaltung|konversation|gesprach|gespraech|kontext|erinnerungen|systemprompt|passworter|passwoerter|passwort|kennworter|kennwort|zugangsdaten|anmeldedaten|api-schlussel|api-schluessel|api keys?|schlussel|schluessel|tokens?|geheimnisse|cookies`+
			`|personlichen? daten|persoenlichen? daten|nutzerdaten|benutzerdaten|private[nr]? daten)`+
			`[^\n]{0,80}? (?:an|nach|zu|auf|uber|ueber|via) (?:`+destURL+`|(?:diese|die folgende|folgende|meine) (?:url|adresse|webadresse|e-mail-adresse|email|server|webhook))`),
}

var portugueseRules = []tokenRule{
	phrase(InstructionIgnore, 260,
		[]string{"ignore", "ignora", "ignorem", "esqueca", "esquece", "esquecam", "desconsidere", "desconsidera", "descarte", "descarta",
			"nao siga", "nao sigas", "nao obedeca", "deixe de lado", "nao leve em conta", "nao considere"},
		` (?:(?:todas|todos|tudo|toda|as|os|a|o|suas|tuas|quaisquer|de|das|dos) ){0,4}(?:`+
			`(?:instrucoes|orientacoes|ordens|regras|normas|diretrizes|diretivas|comandos|restricoes|limitacoes|prompts?|politicas)`+
			`(?: (?:de seguranca|do sistema))?(?: (?:anteriores|previas|precedentes|acima|originais|iniciais|do sistema|de seguranca|que (?:voce )?recebeu|que te (?:deram|foram dadas)|dadas (?:antes|anteriormente)))`+
			`|(?:anteriores|previas) (?:instrucoes|orientacoes|ordens|regras|diretrizes)`+
			`|(?:suas|tuas|seus|teus) (?:instrucoes|orientacoes|ordens|regras|normas|diretrizes|restricoes|limitacoes)`+
			`|tudo (?:o que (?:esta )?acima|acima|o que (?:te|lhe) (?:disseram|foi dito)|o que (?:voce|tu) (?:sabe|sabes)|anterior)`+
			`)`),
	phrase(InstructionIgnore, 220,
		[]string{"desative", "desativa", "desligue", "desliga", "contorne", "contorna", "burle", "burla", "ignore", "ignora", "remova", "remove", "passe por cima"},
		` (?:de )?(?:(?:todos|todas|os|as|seus|suas|teus|tuas|o|a|seu|sua|teu|tua) ){0,2}(?:`+
			`(?:filtros?|restricoes|limitacoes|protecoes|salvaguardas|barreiras|politicas|regras|normas|diretrizes|travas|bloqueios) (?:de seguranca|eticas?|morais|de conteudo)`+
			`|(?:seus|suas|teus|tuas|seu|teu) (?:filtros?|restricoes|limitacoes|protecoes|salvaguardas|travas|censura)`+
			`|censura)`),
	phrase(InstructionOverride, 260,
		[]string{"agora voce e", "voce agora e", "a partir de agora voce e", "de agora em diante voce e", "voce nao e mais", "voce ja nao e",
			"agora es", "agora tu es", "tu agora es", "voce se tornou", "voce passa a ser", "agora voce sera", "tu ja nao es", "ja nao es"},
		` (?:um |uma |o |a )?(?:`+
			`(?:ia|assistente|modelo|chatbot|bot|inteligencia artificial|llm)(?: de linguagem)? (?:sem (?:restricoes|filtros|limites|censura|regras)|livre|liberad[oa]|malvad[oa]|desbloquead[oa])`+
			`|(?:ia|inteligencia artificial|modelo de linguagem|dan|gpt|chatgpt|llm)`+roleEnd(`e|que|sem|com|chamad[oa]|livre`)+
			`|livre de (?:restricoes|regras|limites|filtros)|(?:em )?modo (?:desenvolvedor|deus|dan|sem restricoes)`+
			`)`),
	phrase(InstructionOverride, 200,
		[]string{"voce nao esta mais", "voce ja nao esta", "tu ja nao estas", "nao estas mais"},
		` (?:pres[oa]|sujeit[oa]|limitad[oa]|obrigad[oa]|restrit[oa]|vinculad[oa]) (?:a|as|aos|por|pelas|pelos) (?:nenhuma |qualquer |suas |tuas )?(?:regras|restricoes|diretrizes|politicas|instrucoes|limitacoes|normas)`),
	phrase(InstructionOverride, 220,
		[]string{"aja", "age", "atue", "atua", "finja", "finge", "comporte-se", "comporte se", "se comporte", "faca de conta", "simule", "interprete o papel"},
		`,? (?:como se (?:fosse|voce fosse|nao tivesse|voce nao tivesse) |como |ser |que (?:voce )?(?:e|es) |que (?:voce )?nao (?:tem|tenha|possui|ha) |de )?(?:um |uma |o |a )?(?:(?:ia|assistente|modelo|chatbot|bot) )?(?:`+
			`sem (?:nenhuma |nenhum |qualquer )?(?:restricoes|restricao|filtros?|limites?|censura|regras?|etica)|liberad[oa]|malvad[oa]|desbloquead[oa]|dan\b|(?:nenhuma |nenhum |qualquer )?(?:restricoes|restricao|regras?|limites?|filtros?)\b`+
			`)`),
	phrase(InstructionOverride, 120,
		[]string{"novo prompt do sistema", "novo prompt de sistema", "novas instrucoes do sistema", "novas instrucoes de sistema", "novo system prompt"},
		``),
	phrase(InstructionOverride, 80,
		[]string{"novo prompt", "prompt do sistema", "instrucoes do sistema"},
		`\s?:`),
	phrase(InstructionOverride, 220,
		[]string{"revele", "revela", "mostre", "mostra", "mostre-me", "me mostre", "me diga", "me de", "imprima", "imprime", "diga", "diz",
			"repita", "repete", "exiba", "exibe", "compartilhe", "qual e"},
		` (?:me |-me )?(?:(?:o|a|os|as|seu|sua|seus|suas|teu|tua|todo|todas|completo|exatamente|palavra por palavra) ){0,3}(?:`+
			`(?:prompt|mensagem|instrucoes)(?: (?:original|inicial|oculto|secreto|originais|iniciais|ocultas|secretas|completo|completas))? (?:do|de) sistema`+
			`|system prompt|prompt (?:original|inicial|oculto|secreto)|instrucoes (?:ocultas|secretas)`+
			`|(?:suas|tuas) instrucoes (?:originais|iniciais)`+
			`)`),
	phrase(InstructionOverride, 260,
		[]string{"a partir de agora", "de agora em diante", "daqui em diante", "doravante", "a partir deste momento", "daqui para frente"},
		`,? (?:(?:voce|tu|sempre|vai|vais|deve|deves|devera|tem que|so|somente|apenas|ira) ){0,3}(?:`+
			`(?:ignore|ignora|ignorar|ignorara|obedeca|obedece|obedecer|obedecera|aja|age|agir|agira|atue|atuar|finja|finge|fingir|simule)\b`+
			`|(?:responda|responde|responder|respondera) (?:como (?:dan|uma? (?:ia|assistente) sem)|sem (?:restricoes|filtros|censura|limites|regras))`+
			`|(?:nunca|jamais) (?:recuse|recusa|recusar|recusara|recusaras|negue|negar|diga nao)|(?:recuse|recusa|recusar|negue|nega|negar) (?:nada|nenhum)`+
			`|(?:inclua|inclui|incluir|adicione|adiciona|adicionar|insira|termine|comece)\b[^\n]{0,60}?(?:https?://|www\.|\blinks?\b|\burl\b)`+
			`)`),
	phrase(InstructionConceal, 220,
		[]string{"nao conte", "nao conta", "nao diga", "nao diz", "nao mencione", "nao menciona", "nao revele", "nao revela", "nao informe",
			"nao informa", "nao fale", "nao mostre", "nao explique"},
		`(?: (?:nada|isso|isto|disso|sobre isso|sobre isto|essas instrucoes|esta instrucao|esta mensagem)){0,2} (?:ao|para o|pro|a o) (?:usuario|utilizador|humano|operador)`),
	phrase(InstructionConceal, 160,
		[]string{"sem que o usuario", "sem que o utilizador", "sem que o humano"},
		` (?:saiba|perceba|note|veja|descubra|desconfie)`),
	phrase(InstructionConceal, 160,
		[]string{"sem contar", "sem dizer", "sem avisar", "sem informar", "sem mencionar"},
		`(?: nada| isso)? (?:ao|para o|o) (?:usuario|utilizador|humano)`),
	phrase(InstructionConceal, 200,
		[]string{"esconda", "esconde", "oculte", "oculta", "mantenha", "guarde"},
		` (?:isso|isto|esta instrucao|estas instrucoes|esta mensagem|tudo isso)(?: (?:em segredo|oculto|escondido))? (?:do|ao|para o) (?:usuario|utilizador|humano)`),
	phrase(InstructionConceal, 160,
		[]string{"o usuario nao", "o utilizador nao"},
		` (?:deve|pode|precisa) (?:nunca )?(?:saber|descobrir|perceber|notar|desconfiar)`),
	phrase(InstructionExfil, 340,
		[]string{"envie", "envia", "mande", "manda", "encaminhe", "encaminha", "transmita", "carregue", "suba", "faca upload", "exfiltre",
			"vaze", "poste", "publique", "copie", "compartilhe"},
		` (?:me |nos )?(?:(?:todo|toda|todos|todas|o|a|os|as|seu|sua|seus|suas|meu|minha|meus|minhas|este|esta|completo|completa|inteiro|inteira|do|da|de|usuario) ){0,4}`+
			`(?:conversas?|historico(?: (?:de|da|do) (?:conversa|chat|mensagens))?|chat|memorias|lembrancas|contexto|prompt do sistema|system prompt|senhas?|chaves(?: de api)?|chave de api|credenciais|segredos|tokens?|cookies`+
			`|dados (?:pessoais|privados|do usuario|da conversa|sensiveis)|informacoes (?:pessoais|privadas|do usuario|sensiveis))`+
			`[^\n]{0,80}? (?:para|a|ao|em|no|na|via) (?:`+destURL+`|(?:esta|este|a seguinte|o seguinte|meu|minha) (?:url|endereco|servidor|endpoint|webhook|link|e-?mail))`),
}

var italianRules = []tokenRule{
	phrase(InstructionIgnore, 260,
		[]string{"ignora", "ignori", "ignorate", "dimentica", "dimentichi", "dimenticate", "non seguire", "non segua", "non seguite",
			"non obbedire", "non tenere conto", "non tener conto", "non considerare", "trascura", "tralascia", "lascia perdere", "scarta", "disattendi"},
		` (?:di |delle |dei |degli )?(?:(?:tutte|tutti|tutto|le|gli|i|il|la|l'|tue|tuoi|queste|quelle|qualsiasi|ogni|delle|dei|degli|di) ){0,4}(?:`+
			`(?:istruzioni|indicazioni|direttive|regole|norme|linee guida|ordini|comandi|restrizioni|limitazioni|prompts?|politiche|consegne)`+
			`(?: (?:di sicurezza|del sistema|di sistema))?(?: (?:precedenti|anteriori|di prima|sopra|qui sopra|originali|iniziali|del sistema|di sistema|di sicurezza|ricevute|che (?:ti )?(?:hanno dato|sono state date|hai ricevuto)))`+
			`|(?:le tue|tue|i tuoi|tuoi) (?:istruzioni|regole|direttive|restrizioni|linee guida|indicazioni)`+
			`|tutto (?:cio che |quello che )?(?:e |e' )?(?:scritto |detto )?(?:sopra|prima|in precedenza)|tutto quello che (?:ti )?(?:hanno detto|e stato detto|sai)`+
			`)`),
	phrase(InstructionIgnore, 220,
		[]string{"disattiva", "disattivi", "disabilita", "aggira", "aggiri", "eludi", "elude", "bypassa", "ignora", "rimuovi", "togli", "scavalca"},
		` (?:(?:tutti|tutte|i|le|il|la|tuoi|tue|i tuoi|le tue|il tuo|la tua|ogni) ){0,2}(?:`+
			`(?:filtri|filtro|restrizioni|limitazioni|protezioni|salvaguardie|barriere|politiche|regole|norme|linee guida|blocchi|censura) (?:di sicurezza|etiche|etici|morali|di contenuto)`+
			`|(?:i tuoi|le tue|il tuo|la tua|tuoi|tue) (?:filtri|filtro|restrizioni|limitazioni|protezioni|salvaguardie|blocchi|censura)`+
			`|censura)`),
	phrase(InstructionOverride, 260,
		[]string{"ora sei", "adesso sei", "da ora sei", "da adesso sei", "d'ora in poi sei", "da ora in poi sei", "non sei piu", "sei ora",
			"sei adesso", "ora diventi", "ora ti trasformi in"},
		` (?:un |una |un'|il |la |l')?(?:`+
			`(?:ia|assistente|modello|chatbot|bot|intelligenza artificiale|llm)(?: linguistico)? (?:senza (?:restrizioni|filtri|limiti|censura|regole)|liber[oa]|liberat[oa]|malvagi[oa]|sbloccat[oa])`+
			`|(?:ia|intelligenza artificiale|modello linguistico|dan|gpt|chatgpt|llm)`+roleEnd(`e|che|senza|con|chiamat[oa]|liber[oa]`)+
			`|liber[oa] da (?:ogni |qualsiasi |tutte le )?(?:restrizion[ei]|regol[ae]|limit[ei]|filtr[oi])|(?:in )?modalita (?:sviluppatore|dio|dan|senza restrizioni)`+
			`|(?:vincolat[oa]|obbligat[oa]|limitat[oa]|tenut[oa]) (?:a|alle|dalle|da) (?:regole|restrizioni|linee guida|politiche|istruzioni|tue regole)`+
			`)`),
	phrase(InstructionOverride, 220,
		[]string{"agisci", "agisca", "comportati", "si comporti", "fingi", "finga", "fai finta", "faccia finta", "simula", "interpreta", "impersona"},
		`,? (?:come se fossi |come se non avessi |di non avere |come |da |di essere |che sei |che tu sia |che non hai |che non ci sono )?(?:un |una |il |la |l')?(?:(?:ia|assistente|modello|chatbot|bot) )?(?:`+
			`senza (?:(?:alcuna|alcun|nessuna|nessun) )?(?:restrizion[ei]|filtr[oi]|limit[ei]|censura|regol[ae]|etica)|liberat[oa]|malvagi[oa]|sbloccat[oa]|dan\b|(?:(?:nessuna|nessun|alcuna|alcun) )?(?:restrizion[ei]|regol[ae]|limit[ei]|filtr[oi])\b`+
			`)`),
	phrase(InstructionOverride, 120,
		[]string{"nuovo prompt di sistema", "nuovo prompt del sistema", "nuove istruzioni di sistema", "nuove istruzioni del sistema", "nuovo system prompt"},
		``),
	phrase(InstructionOverride, 80,
		[]string{"nuovo prompt", "prompt di sistema", "prompt del sistema", "istruzioni di sistema"},
		`\s?:`),
	phrase(InstructionOverride, 220,
		[]string{"rivela", "riveli", "mostra", "mostrami", "mostri", "stampa", "stampi", "dimmi", "dammi", "ripeti", "scrivi", "condividi",
			"qual e", "quali sono", "svela"},
		` (?:mi )?(?:(?:il|la|le|i|tuo|tua|tue|tuoi|il tuo|la tua|le tue|intero|completo|esattamente|parola per parola) ){0,3}(?:`+
			`(?:prompt|messaggio|istruzioni)(?: (?:originale|iniziale|nascosto|segreto|originali|iniziali|nascoste|segrete|completo|completa))? (?:di|del) sistema`+
			`|system prompt|prompt (?:originale|iniziale|nascosto|segreto)|istruzioni (?:nascoste|segrete)`+
			`|(?:le tue|tue) istruzioni (?:originali|iniziali)`+
			`)`),
	phrase(InstructionOverride, 260,
		[]string{"d'ora in poi", "da ora in poi", "da adesso in poi", "d'ora in avanti", "da questo momento", "d'ora innanzi", "d ora in poi"},
		`,? (?:(?:tu|sempre|devi|dovrai|solo|soltanto|ti) ){0,3}(?:`+
			`(?:ignora|ignorerai|ignorare|obbedisci|obbedirai|obbedire|agisci|agirai|agire|comportati|fingi|fingerai|fingere|simula|simulerai)\b`+
			`|(?:rispondi|risponderai|rispondere) (?:come (?:dan|un'?(?:ia| ia| assistente) senza)|senza (?:restrizioni|filtri|censura|limiti|regole))`+
			`|(?:non )?(?:rifiuterai|rifiutare|rifiutarti|rifiuti) (?:mai|nulla|niente)|(?:mai|non) (?:rifiutare|rifiutarti|dire di no)`+
			`|(?:includi|includerai|aggiungi|aggiungerai|inserisci|inserirai|termina|inizia)\b[^\n]{0,60}?(?:https?://|www\.|\blinks?\b|\burl\b|\bcollegamento\b)`+
			`)`),
	phrase(InstructionConceal, 220,
		[]string{"non dire", "non dirlo", "non dirgli", "non raccontare", "non menzionare", "non rivelare", "non informare", "non comunicare",
			"non mostrare", "non spiegare", "non far sapere", "non farlo sapere", "non parlare"},
		`(?: (?:nulla|niente|questo|questa istruzione|queste istruzioni|questo messaggio|di questo|nulla di questo|di tutto questo|tutto questo|di tutto cio|di cio)){0,2} (?:all'|all |a l'|all')(?:utente|umano|operatore)`),
	phrase(InstructionConceal, 160,
		[]string{"senza che l'utente", "senza che l utente", "senza che l'umano"},
		` (?:lo |se ne )?(?:sappia|noti|veda|scopra|accorga|sospetti)`),
	phrase(InstructionConceal, 160,
		[]string{"senza dirlo", "senza dire nulla", "senza avvisare", "senza informare", "senza dirglielo", "senza dire niente"},
		` (?:all'|all |l'|l )(?:utente|umano)`),
	phrase(InstructionConceal, 200,
		[]string{"nascondi", "nasconda", "cela", "mantieni", "tieni"},
		` (?:questo|questa istruzione|queste istruzioni|questo messaggio|tutto questo)(?: (?:segreto|nascosto|riservato|segrete|nascoste))? (?:all'|all |dall'|dall |per l')(?:utente|umano)`),
	phrase(InstructionConceal, 160,
		[]string{"l'utente non", "l utente non"},
		` (?:deve|dovra|puo) (?:mai )?(?:saperlo|sapere|scoprire|accorgersene|notare|sospettare)`),
	phrase(InstructionExfil, 340,
		[]string{"invia", "invii", "inviate", "manda", "mandi", "inoltra", "inoltri", "carica", "carichi", "trasmetti", "esfiltra", "pubblica", "copia", "condividi"},
		` (?:mi |ci )?(?:(?:tutto|tutta|tutti|tutte|il|la|lo|i|gli|le|l'|tuo|tua|tuoi|tue|mio|mia|miei|mie|questo|questa|intero|intera|completo|completa|dell'|della|del|dell|utente) ){0,4}`+
			`(?:conversazion[ei]|cronologia(?: (?:della|delle) (?:chat|conversazion[ei]))?|chat|memorie|ricordi|contesto|prompt di sistema|system prompt|password|chiavi(?: api)?|chiave api|credenziali|segreti|token|cookie`+
			`|dati (?:personali|privati|dell'utente|della conversazione|sensibili)|informazioni (?:personali|private|dell'utente|sensibili))`+
			`[^\n]{0,80}? (?:a|al|all'|su|verso|tramite|in) (?:`+destURL+`|(?:questo|questa|il seguente|la seguente|mio|mia) (?:url|indirizzo|server|endpoint|webhook|link|email))`),
}

var dutchRules = []tokenRule{
	phrase(InstructionIgnore, 260,
		[]string{"negeer", "vergeet", "houd geen rekening met", "hou geen rekening met", "let niet op", "schenk geen aandacht aan", "laat varen"},
		` (?:(?:alle|al|de|het|je|jouw|uw|deze|die) ){0,3}(?:`+
			`(?:(?:vorige|eerdere|voorgaande|bovenstaande|bovenste|oorspronkelijke|originele|initiele|gegeven|eerste|systeem|veiligheids) ){1,2}`+
			`(?:instructies|instructie|opdrachten|opdracht|regels|richtlijnen|aanwijzingen|prompts?|bevelen|commando's|commandos|beperkingen|systeeminstructies|systeemprompt)`+
			`|(?:je|jouw|uw|al je|al jouw) (?:instructies|regels|richtlijnen|programmering|beperkingen|systeeminstructies|systeemprompt)`+
			`|(?:instructies|regels|richtlijnen|aanwijzingen|opdrachten) (?:hierboven|hiervoor|van hierboven|daarvoor|die je (?:eerder )?(?:hebt )?(?:gekregen|kreeg))`+
			`|alles (?:wat )?(?:hierboven|eerder|daarvoor|hiervoor|voorheen)(?: (?:staat|is gezegd|gezegd is|werd gezegd|geschreven))?`+
			`|alles wat (?:je|jou|u) (?:is|werd) (?:verteld|gezegd|opgedragen)`+
			`)`),
	phrase(InstructionIgnore, 200,
		[]string{"volg", "volgt", "gehoorzaam"},
		` (?:(?:de|je|jouw|alle|uw) ){0,2}(?:(?:vorige|eerdere|voorgaande|bovenstaande|oorspronkelijke|oude) )?(?:instructies|regels|richtlijnen|aanwijzingen|opdrachten) (?:niet|nooit) (?:meer|langer)`),
	phrase(InstructionIgnore, 220,
		[]string{"schakel", "zet", "omzeil", "omzeilt", "ontwijk", "negeer", "verwijder", "hef", "deactiveer"},
		` (?:(?:al|alle|je|jouw|uw|de|het) ){0,2}(?:`+
			`(?:veiligheidsfilters?|veiligheidsregels|veiligheidsmaatregelen|veiligheidsrichtlijnen|inhoudsfilters?|ethische (?:regels|richtlijnen|grenzen|beperkingen)|censuur)`+
			`|(?:je|jouw|uw) (?:filters?|beperkingen|restricties|beveiligingen|grenzen|waarborgen|regels))`),
	phrase(InstructionOverride, 260,
		[]string{"je bent nu", "jij bent nu", "u bent nu", "vanaf nu ben je", "vanaf nu bent u", "nu ben je", "je bent niet langer",
			"jij bent niet langer", "u bent niet langer", "je bent geen", "je bent vanaf nu", "je wordt nu"},
		` (?:een |de |het |in )?(?:`+
			`(?:ai|ki|assistent|model|taalmodel|chatbot|bot|llm) (?:zonder (?:beperkingen|filters|grenzen|regels|censuur|restricties)|meer)\b`+
			`|(?:onbeperkte|ongefilterde|ongecensureerde|kwaadaardige|vrije|bevrijde|gejailbreakte) (?:ai|ki|assistent|model|taalmodel|chatbot|bot|versie)`+
			`|(?:ai|ki|taalmodel|dan|gpt|chatgpt|llm)`+roleEnd(`en|die|dat|zonder|met|genaamd|vrij|meer`)+`|(?:in )?(?:ontwikkelaarsmodus|developer mode|dan-modus|dan modus|godmodus|god mode)`+
			`|(?:meer )?gebonden aan (?:je |jouw |de |enige |regels|richtlijnen)|vrij van (?:alle |elke |enige )?(?:regels|beperkingen|restricties|filters|grenzen|richtlijnen)`+
			`)`),
	phrase(InstructionOverride, 220,
		[]string{"gedraag je", "gedraagt u zich", "doe alsof", "doe of", "speel de rol", "treed op als", "handel als", "fungeer als", "simuleer", "doe je voor als"},
		`,? (?:als |alsof |je |jij |u |dat je |van )?(?:(?:een|de|het) )?(?:(?:ai|assistent|model|taalmodel|chatbot|bot) )?(?:`+
			`zonder (?:beperkingen|filters|grenzen|regels|censuur|restricties|ethiek)`+
			`|(?:onbeperkte|ongefilterde|ongecensureerde|kwaadaardige|bevrijde|gejailbreakte) (?:ai|assistent|model|taalmodel|chatbot|bot)`+
			`|dan\b|(?:je |jij )?(?:geen|zonder) (?:beperkingen|regels|grenzen|filters|restricties)`+
			`)`),
	phrase(InstructionOverride, 120,
		[]string{"nieuwe systeemprompt", "nieuwe systeeminstructies", "nieuwe systeemopdracht", "nieuw systeembericht"},
		``),
	phrase(InstructionOverride, 80,
		[]string{"systeemprompt", "systeeminstructies"},
		`\s?:`),
	phrase(InstructionOverride, 220,
		[]string{"toon", "laat", "geef", "print", "herhaal", "onthul", "vertel", "deel", "kopieer", "wat is", "wat zijn", "schrijf"},
		` (?:me |mij |ons )?(?:(?:je|jouw|uw|de|het|volledige|complete|exacte|letterlijk|woord voor woord|eens) ){0,3}(?:`+
			`systeemprompt|systeeminstructies|systeembericht|systeem-prompt|system prompt`+
			`|(?:je|jouw|uw) (?:oorspronkelijke|originele|verborgen|geheime|initiele|interne) (?:instructies|prompt|opdrachten)`+
			`)`),
	phrase(InstructionOverride, 260,
		[]string{"vanaf nu", "vanaf heden", "voortaan", "van nu af aan", "vanaf dit moment", "vanaf vandaag"},
		`,? (?:(?:je|jij|u|zul|zult|moet|ga|gaat|altijd|alleen|zal) ){0,4}(?:`+
			`(?:negeer|negeren|negeert|gehoorzaam|gehoorzamen|gehoorzaamt|gedraag je|gedraagt|doe alsof|doet alsof|speel|speelt|simuleer)\b`+
			`|(?:antwoord|antwoordt|antwoorden) (?:als dan|zonder (?:beperkingen|filters|censuur|regels|grenzen))`+
			`|(?:weiger|weigeren|weigert) (?:je )?(?:niets|nooit)|(?:nooit|niets) (?:meer )?(?:weigeren|weiger|weigert)`+
			`|(?:voeg|voegt|voegen|zet|plaats)\b[^\n]{0,60}?(?:https?://|www\.|\blinks?\b|\burl\b)`+
			`)`),
	phrase(InstructionConceal, 200,
		[]string{"vertel", "vertelt", "zeg", "zegt"},
		` (?:(?:het |dit |dat )?(?:aan |tegen )?de (?:gebruiker|mens|operator) (?:hier |daar |er |hierover |daarover )?(?:niet|niets|nooit)|(?:niets|er niets over|het niet|dit niet|dat niet|niet) (?:aan |tegen )?de (?:gebruiker|mens|operator))`),
	phrase(InstructionConceal, 200,
		[]string{"laat", "vermeld", "noem", "verklap", "onthul"},
		` (?:(?:dit |het |dat )?(?:niets|niet|nooit) (?:aan |tegen |bij )?de (?:gebruiker|mens) (?:weten|merken|zien)|(?:dit |het |dat )?(?:aan |tegen |bij )?de (?:gebruiker|mens) (?:niet|nooit|niets) (?:weten|merken|zien))`),
	phrase(InstructionConceal, 180,
		[]string{"zonder dat de"},
		` (?:gebruiker|mens) (?:het |dit |er iets (?:van|over) )?(?:weet|merkt|ziet|doorheeft|te weten komt)`),
	phrase(InstructionConceal, 180,
		[]string{"zonder het", "zonder dit", "zonder de gebruiker"},
		`(?: aan)?(?: de gebruiker)? te (?:vertellen|melden|laten weten|zeggen|informeren)`),
	phrase(InstructionConceal, 180,
		[]string{"de gebruiker"},
		` (?:mag|moet|hoeft) (?:dit |het |dat |hier |er )?(?:niet|nooit|niets)(?: van)? (?:weten|te weten komen|merken|ontdekken)`),
	phrase(InstructionConceal, 180,
		[]string{"verberg", "verzwijg", "houd", "hou"},
		` (?:dit|het|dat|deze instructie|deze instructies|dit bericht)(?: geheim)? (?:voor|van) de (?:gebruiker|mens)`),
	phrase(InstructionExfil, 340,
		[]string{"stuur", "stuurt", "verstuur", "verzend", "zend", "upload", "plaats", "post", "exfiltreer", "lek", "kopieer", "deel", "mail"},
		` (?:me |ons )?(?:(?:de|het|alle|al|hele|gehele|volledige|complete|je|jouw|mijn|deze|dit|van|gebruikers|gebruiker|opgeslagen|bewaarde|onthouden) ){0,4}`+
			`(?:gesprek(?:ken)?|gespreksgeschiedenis|chatgeschiedenis|chat|herinneringen|context|systeemprompt|system prompt|wachtwoorden|wachtwoord|api-sleutels?|sleutels|inloggegevens|credentials|geheimen|tokens?|cookies`+
			`|persoonlijke gegevens|persoonsgegevens|gebruikersgegevens|privegegevens)`+
			`[^\n]{0,80}? (?:naar|aan|op|via) (?:`+destURL+`|(?:deze|de volgende|het volgende|mijn) (?:url|adres|server|endpoint|webhook|link|e-?mail(?:adres)?))`),
}

var russianRules = []tokenRule{
	phrase(InstructionIgnore, 420,
		[]string{"игнорируй", "игнорируйте", "проигнорируй", "проигнорируйте", "забудь", "забудьте", "не обращай внимания на",
			"не обращайте внимания на", "не следуй", "не следуйте", "не выполняй", "не выполняйте", "отбрось", "отбросьте", "пренебреги",
			"отмени", "отмените", "не слушай", "не учитывай", "не учитывайте"},
		`,? (?:(?:все|всех|любые|эти|те|свои|твои|ваши|этих|мои) ){0,3}(?:`+
			`(?:(?:предыдущ|прежн|предшествующ|вышеуказанн|вышеприведенн|вышенаписанн|изначальн|исходн|первоначальн|старых|системн|ранее (?:данн|полученн|заданн))\pL* ){1,2}`+
			`(?:инструкци|указани|правил|директив|команд|промпт|приказ|ограничени|установк|настро)\pL*`+
			`|(?:свои|твои|ваши|все свои|все твои) (?:инструкци|указани|правил|директив|ограничени|установк)\pL*`+
			`|(?:все|всё),? (?:что|чему) (?:было |тебе |вам )?(?:сказано|написано|говорили|сказали|указано|выше|учили|раньше)`+
			`|все (?:вышесказанное|вышенаписанное|вышеизложенное|предыдущее|сказанное выше|написанное выше)`+
			`)`),
	phrase(InstructionIgnore, 380,
		[]string{"отключи", "отключите", "обойди", "обойдите", "сними", "снимите", "игнорируй", "убери", "уберите", "выключи", "деактивируй"},
		` (?:(?:все|свои|твои|ваши|любые|эти) ){0,2}(?:`+
			`(?:свои|твои|ваши) (?:фильтр|ограничени|цензур|запрет|защит|правил)\pL*`+
			`|(?:защитн|этическ|моральн|встроенн)\pL* (?:фильтр|ограничени|цензур|запрет|защит|правил|барьер|механизм)\pL*`+
			`|(?:фильтр|ограничени|защит|механизм|правил)\pL* (?:безопасности|контента|модерации)`+
			`|цензур\pL*|(?:все )?(?:ограничения|запреты)`+
			`)`),
	phrase(InstructionOverride, 420,
		[]string{"теперь ты", "ты теперь", "отныне ты", "с этого момента ты", "ты больше не", "теперь вы", "вы теперь", "вы больше не",
			"ты становишься", "ты стал", "отныне вы"},
		` (?:— |- |это )?(?:`+
			`(?:неограниченн|нефильтрованн|нецензурированн|свободн|освобожденн|злой|злая|злым|взломанн|друг|нов|ины)\pL* (?:ии|ai|ассистент|модел|чат-?бот|бот|нейросет|искусственн\pL* интеллект)\pL*`+
			`|(?:ии|ai|ассистент\pL*|модел\pL*|чат-?бот\pL*|бот\pL*|нейросет\pL*) без (?:ограничений|фильтров|цензуры|правил)`+
			`|(?:ии|ai|dan|дэн|gpt|chatgpt|llm|нейросеть|языковая модель|искусственный интеллект)`+roleEnd(`и|который|которая|без|с|по имени`)+
			`|(?:в )?режим\pL* (?:разработчика|бога|dan|без ограничений)`+
			`|(?:не )?(?:связан|ограничен|обязан)\pL* (?:никакими |какими-либо |своими |этими )?(?:правил|ограничени|инструкци|политик|норм)\pL*`+
			`|свобод\pL* от (?:всех |любых )?(?:правил|ограничений|фильтров|цензуры)`+
			`)`),
	phrase(InstructionOverride, 380,
		[]string{"веди себя как", "ведите себя как", "действуй как", "действуйте как", "притворись", "притворитесь", "представь, что ты",
			"представь что ты", "сыграй роль", "играй роль", "выступай в роли", "изобрази", "прикинься"},
		`,? (?:что ты |что вы |будто ты |будто вы |что |как |будто )?(?:`+
			`(?:(?:неограниченн|нефильтрованн|нецензурированн|злой|злым|взломанн)\pL* )?(?:ии|ai|ассистент\pL*|модел\pL*|чат-?бот\pL*|бот\pL*|нейросет\pL*) без (?:ограничений|фильтров|цензуры|правил|морали|этики)`+
			`|(?:у (?:тебя|вас) )?нет (?:никаких )?(?:ограничений|правил|фильтров|цензуры)`+
			`|(?:неограниченн|нефильтрованн|нецензурированн|злой|злым|взломанн)\pL* (?:ии|ai|ассистент|модел|бот|нейросет)\pL*`+
			`|dan\b|дэн`+
			`)`),
	phrase(InstructionOverride, 200,
		[]string{"новый системный", "обновленный системный", "новые системные"},
		` (?:промпт|запрос|инструкци|подсказк|указани)\pL*`),
	phrase(InstructionOverride, 120,
		[]string{"системный промпт", "системные инструкции", "системное сообщение"},
		`\s?:`),
	phrase(InstructionOverride, 400,
		[]string{"покажи", "покажите", "выведи", "выведите", "раскрой", "раскройте", "напечатай", "напиши", "повтори", "повторите",
			"скажи", "скажите", "расскажи", "расскажите", "какой у тебя", "какие у тебя", "процитируй", "озвучь", "дай"},
		` (?:мне )?(?:(?:весь|все|полностью|дословно) ){0,2}(?:`+
			`(?:свой |свои |твой |твои |ваш |ваши )?системн\pL* (?:промпт|инструкци|сообщени|подсказк|запрос)\pL*|system prompt`+
			`|(?:свой|свои|твой|твои|ваш|ваши) (?:(?:скрыт|секретн|исходн|первоначальн|изначальн|внутренн)\pL* )?(?:инструкци|промпт|указани|настройк)\pL*`+
			`|(?:скрыт|секретн)\pL* (?:инструкци|промпт|указани)\pL*`+
			`)`),
	phrase(InstructionOverride, 420,
		[]string{"с этого момента", "отныне", "впредь", "теперь всегда", "начиная с этого момента", "с этой минуты", "с сегодняшнего дня"},
		`,? (?:(?:ты|вы|всегда|будешь|будете|должен|должна|должны|обязан|теперь) ){0,4}(?:`+
			`(?:игнорир|проигнорир|подчиня|слушайся|слушаться|повинуйся|повиноваться|притворяйся|притворяться)\pL*`+
			`|(?:веди|вести) себя как|действуй как|действовать как`+
			`|(?:отвечай|отвечать|отвечаешь) (?:как (?:dan|дэн)|без (?:ограничений|цензуры|фильтров|правил))`+
			`|никогда не отказыва\pL*|не отказывай\pL* (?:ни в чем|никогда)`+
			`|(?:добавля|вставля|включа)\pL*[^\n]{0,60}?(?:https?://|www\.|ссылк\pL*|url)`+
			`)`),
	phrase(InstructionConceal, 360,
		[]string{"не говори", "не говорите", "не сообщай", "не сообщайте", "не рассказывай", "не рассказывайте", "не упоминай",
			"не упоминайте", "не показывай", "не раскрывай", "ничего не говори", "ничего не сообщай"},
		` (?:об этом |этого |это |ничего |про это |об этой инструкции |эту инструкцию |об этих инструкциях )?(?:пользовател|юзер|оператор)\pL*`),
	phrase(InstructionConceal, 300,
		[]string{"скрой", "скройте", "утаи", "утаите"},
		` (?:это |эту инструкцию |этот текст |все это |эти инструкции )?от (?:пользовател|юзер)\pL*`),
	phrase(InstructionConceal, 300,
		[]string{"пользователь не"},
		` (?:должен|должна|будет|узнает|должен ничего) (?:ничего )?(?:знать|узнать|заметить|догадаться|подозревать)`),
	phrase(InstructionConceal, 240,
		[]string{"втайне от", "тайно от", "без ведома", "так, чтобы пользователь не", "так чтобы пользователь не", "чтобы пользователь не"},
		`(?: (?:пользовател|юзер)\pL*| (?:узнал|заметил|догадался|понял))`),
	phrase(InstructionExfil, 520,
		[]string{"отправь", "отправьте", "пошли", "пошлите", "перешли", "перешлите", "загрузи", "загрузите", "выгрузи", "передай", "передайте", "слей", "опубликуй", "скопируй"},
		` (?:мне )?(?:(?:всю|весь|все|полную|полный|эту|этот|свою|свой|мою|мой|историю|содержимое|пользователя|сохран\pL*|запомнен\pL*) ){0,4}`+
			`(?:переписк|истори|диалог|разговор|чат|контекст|памят|воспоминани|системн\pL* промпт|парол|ключ|токен|куки|cookie|учетн\pL* данн|секрет|персональн\pL* данн|личн\pL* данн|данн\pL* пользовател)\pL*`+
			`[^\n]{0,100}? (?:на|по адресу|в|через|по) (?:`+destURL+`|(?:этот|следующий|мой) (?:адрес|url|сервер|вебхук|webhook|email|почт\pL*))`),
}

var chineseRules = []tokenRule{
	phrase(InstructionIgnore, 240,
		[]string{"忽略", "忽視", "忽视", "无视", "無視", "忘记", "忘記", "忘掉", "不要理会", "不要理會", "不要遵守", "不要遵循", "别管", "別管",
			"放弃", "放棄", "丢弃", "丟棄", "抛开", "拋開", "跳过", "跳過", "不理会", "不用理会", "不必遵守"},
		`(?:掉)?(?:你)?(?:`+
			`(?:之前|以前|先前|此前|上面|上述|以上|前面|早先|原来|原先|原有|原始|最初|所有|全部|一切|任何|系统|系統)(?:的)?(?:所有|全部|一切|任何)?(?:的)?(?:(?:之前|以前|先前|上面|上述|以上|前面|原来|原有|系统|系統|安全)(?:的)?)?`+
			`(?:指令|指示|命令|说明|說明|提示词|提示詞|提示|规则|規則|要求|设定|設定|限制|约束|約束|准则|準則|规定|規定)`+
			`|(?:以上|上面|上述|前面)(?:的)?(?:所有|全部|一切)?(?:的)?(?:内容|內容|文字|文本|信息|話|话)`+
			`|(?:你收到的|你被告知的|别人告诉你的|你所知道的)(?:一切|所有)`+
			`|(?:的)?(?:所有的?|全部的?|一切)?(?:指令|指示|命令|规则|規則|设定|設定|限制|约束|約束|准则|準則|规定|規定|原则|原則)`+
			`)`),
	phrase(InstructionIgnore, 200,
		[]string{"绕过", "繞過", "绕开", "繞開", "规避", "規避", "关闭", "關閉", "禁用", "解除", "突破", "停用", "无视", "忽略"},
		`(?:掉)?(?:`+
			`(?:你的|您的)(?:所有的?|全部的?|一切|任何)?(?:安全|内容|內容|道德|伦理|倫理)?(?:的)?(?:限制|过滤器?|過濾器?|审查|審查|防护|防護|护栏|護欄|约束|約束|规则|規則|准则|準則)`+
			`|(?:所有的?|全部的?|一切|任何)?(?:安全|内容|內容|道德|伦理|倫理)(?:的)?(?:限制|过滤器?|過濾器?|审查|審查|防护|防護|护栏|護欄|约束|約束|准则|準則|策略|机制|機制)`+
			`|(?:所有的?|全部的?|一切|任何)?(?:审查|審查|护栏|護欄)`+
			`)`),
	phrase(InstructionOverride, 200,
		[]string{"你现在是", "你現在是", "现在你是", "現在你是", "从现在开始你是", "從現在開始你是", "从现在起你是", "從現在起你是",
			"你不再是", "你已经不是", "你已經不是", "你将成为", "你將成為", "你现在成为", "你现在已经是"},
		`(?:一个|一個|一名|个|個)?(?:`+
			`(?:不受限制|无限制|無限制|没有限制|沒有限制|不受约束|不受約束|无审查|無審查|未经审查|邪恶|邪惡|越狱|越獄|自由|全新|新|不同)(?:的)?(?:ai|人工智能|人工智慧|助手|助理|模型|机器人|機器人|聊天机器人|聊天機器人|版本)`+
			`|(?:ai|人工智能|人工智慧|dan|gpt|chatgpt|语言模型|語言模型)`+roleEnd(`了|，|没有|沒有|不受|而`)+
			`|(?:开发者|開發者|开发|開發|上帝|越狱|越獄|dan)模式`+
			`)`),
	phrase(InstructionOverride, 160,
		[]string{"你不再受", "你不受", "你已不再受"},
		`(?:到)?(?:任何)?(?:规则|規則|限制|约束|約束|准则|準則|政策|指令)`),
	phrase(InstructionOverride, 200,
		[]string{"扮演", "假装", "假裝", "装作", "裝作", "充当", "充當", "模拟", "模擬", "作为", "作為"},
		`(?:你是|自己是|成|成为|成為)?(?:一个|一個|一名)?(?:`+
			`(?:不受限制|无限制|無限制|没有限制|沒有限制|不受约束|不受約束|无审查|無審查|邪恶|邪惡|越狱|越獄)(?:的)?`+
			`|(?:你)?(?:没有|沒有|不受)(?:任何)?(?:限制|规则|規則|约束|約束|过滤|過濾|审查|審查|道德)`+
			`|dan`+
			`)`),
	phrase(InstructionOverride, 120,
		[]string{"新的系统提示", "新的系統提示", "新系统提示", "新系統提示", "新的系统指令", "新的系統指令", "更新后的系统提示", "更新後的系統提示"},
		``),
	phrase(InstructionOverride, 80,
		[]string{"系统提示", "系統提示", "系统指令", "系統指令"},
		`(?:词|詞)?\s?:`),
	phrase(InstructionOverride, 200,
		[]string{"显示", "顯示", "输出", "輸出", "打印", "告诉我", "告訴我", "透露", "泄露", "洩露", "展示", "给我看", "給我看", "重复", "重複",
			"说出", "說出", "公开", "公開", "把你的", "把您的"},
		`(?:一下)?(?:你的|您的)?(?:完整的?|全部的?|原始的?|初始的?|隐藏的?|隱藏的?|秘密的?|内部的?|內部的?)?(?:`+
			`(?:系统|系統)(?:提示词|提示詞|提示|指令)`+
			`|(?:你的|您的)(?:完整的?|原始的?|初始的?|隐藏的?|隱藏的?|秘密的?|内部的?|內部的?)?(?:提示词|提示詞|指令|指示|初始设定)`+
			`)`),
	phrase(InstructionOverride, 240,
		[]string{"从现在开始", "從現在開始", "从现在起", "從現在起", "从今以后", "從今以後", "从此以后", "從此以後", "今后", "今後", "以后", "以後",
			"接下来", "接下來"},
		`,?(?:你)?(?:必须|必須|要|将|將|会|會|应该|應該)?(?:总是|總是|始终|始終|一直|永远|永遠|都)?(?:要)?(?:只|仅|僅)?(?:`+
			`忽略|忽视|忽視|无视|無視|服从|服從|听从|聽從|听我的|聽我的|扮演|假装|假裝|不要拒绝|不要拒絕|绝不拒绝|絕不拒絕|不得拒绝|不能拒绝|不再拒绝|无条件|無條件`+
			`|以dan|不受(?:任何)?限制地?回答`+
			`|(?:在|于)(?:每个|每個|所有)(?:回答|回复|回覆)(?:中|里|裡)?(?:加上|添加|插入|附上|包含)[^\n]{0,40}?(?:https?://|www\.|链接|鏈接|網址|网址)`+
			`)`),
	phrase(InstructionConceal, 120,
		[]string{"不要", "别", "別", "不能", "不得", "切勿", "请勿", "請勿", "千万不要", "千萬不要", "绝对不要", "絕對不要"},
		`(?:把|将|將)?(?:这|這|此|这件事|這件事|这些|這些|这条|這條)?(?:指令|指示|信息|消息|訊息|内容|內容)?(?:`+
			`(?:告诉|告訴|透露给|透露給|泄露给|洩露給|提及给)(?:用户|用戶|使用者)`+
			`|(?:让|讓)(?:用户|用戶|使用者)(?:知道|看到|发现|發現|察觉|察覺|得知)`+
			`|(?:向|对|對)(?:用户|用戶|使用者)(?:透露|提及|说|說|提起|泄露|洩露)`+
			`)`),
	phrase(InstructionConceal, 90,
		[]string{"在用户", "在用戶", "在使用者"},
		`(?:不知道|不知情|不知晓|不知曉|没有察觉|沒有察覺|没有发现|沒有發現|没注意到|沒注意到)(?:的)?(?:情况下|情況下)`),
	phrase(InstructionConceal, 90,
		[]string{"不让用户", "不讓用戶", "不让使用者", "不讓使用者"},
		`(?:知道|看到|发现|發現|察觉|察覺|得知)`),
	phrase(InstructionConceal, 60,
		[]string{"对用户", "對用戶", "对使用者", "對使用者"},
		`(?:保密|隐瞒|隱瞞)`),
	phrase(InstructionConceal, 60,
		[]string{"瞒着", "瞞著", "背着", "背著"},
		`(?:用户|用戶|使用者)`),
	phrase(InstructionConceal, 90,
		[]string{"用户", "用戶", "使用者"},
		`(?:不应该|不應該|不应|不應|不能|不可以|不得|绝不能|絕不能|不会|不會)(?:知道|发现|發現|察觉|察覺|得知)`),
	phrase(InstructionExfil, 360,
		[]string{"把", "将", "將"},
		`(?:所有|全部|整个|整個|完整的?|你的|用户的|用戶的|使用者的|我们的|我們的|这次|這次|之前的|以上的?|保存的|儲存的|存储的|已保存的)*(?:的)?`+
			`(?:对话|對話|聊天记录|聊天記錄|历史记录|歷史記錄|记忆|記憶|上下文|系统提示|系統提示|提示词|密码|密碼|密钥|密鑰|api密钥|令牌|凭证|憑證|cookie|个人信息|個人資訊|个人数据|個人數據|用户数据|用戶數據|隐私数据|隱私數據)`+
			`[^\n]{0,60}?(?:发送|發送|上传|上傳|转发|轉發|传送|傳送|发|發|提交|泄露|洩露|贴|貼|post)(?:到|至|给|給) ?(?:`+destURL+`|(?:这个|這個|以下|下面的?|我的)(?:网址|網址|地址|链接|鏈接|服务器|伺服器|邮箱|郵箱|url|webhook))`),
	phrase(InstructionExfil, 360,
		[]string{"发送", "發送", "上传", "上傳", "转发", "轉發", "传送", "傳送", "泄露", "洩露"},
		`(?:所有|全部|整个|整個|你的|用户的|用戶的|使用者的|保存的|儲存的|存储的)*(?:的)?`+
			`(?:对话|對話|聊天记录|聊天記錄|历史记录|歷史記錄|记忆|記憶|上下文|系统提示|系統提示|密码|密碼|密钥|密鑰|令牌|凭证|憑證|个人信息|個人資訊|用户数据|用戶數據)`+
			`[^\n]{0,60}?(?:到|至|给|給) ?(?:`+destURL+`|(?:这个|這個|以下|下面的?|我的)(?:网址|網址|地址|链接|鏈接|服务器|伺服器|邮箱|郵箱|url|webhook))`),
}

var japaneseRules = []tokenRule{
	phrase(InstructionIgnore, 240,
		[]string{"以前", "前の", "上記", "上の", "これまで", "今まで", "先ほど", "先程", "前述", "元の", "最初の", "当初の", "既存の", "システムの",
			"すべての", "全ての", "全部の", "あらゆる", "あなたの"},
		`(?:の|に(?:与えられた|受けた|出された))?(?:すべての|全ての|全部の|あらゆる)?`+
			`(?:指示|命令|指令|ルール|規則|プロンプト|制約|制限|ガイドライン|インストラクション)(?:は|を|も)?(?:すべて|全て|全部|一切)?(?:を)?`+jaIgnore),
	phrase(InstructionIgnore, 160,
		[]string{"上記", "以上", "これまで", "今まで"},
		`(?:の内容|のこと|の話|の文章|に書かれたこと)?(?:を|は)?(?:すべて|全て|全部)?`+jaIgnore),
	phrase(InstructionIgnore, 200,
		[]string{"安全", "セーフティ", "コンテンツ", "倫理", "道徳", "あなたの", "検閲", "ガードレール", "セーフガード"},
		`(?:上の|的な|の)?(?:フィルター|フィルタ|制限|制約|ガードレール|セーフガード|ルール|規制|ポリシー|検閲)?(?:を|は)?(?:すべて|全て|一切)?`+
			`(?:無効に|解除|回避|オフに|取り除|無視|突破|バイパス)(?:して|しろ|せよ|しなさい)`),
	phrase(InstructionOverride, 200,
		[]string{"あなたは今から", "今からあなたは", "あなたはこれから", "これからあなたは", "あなたはもう", "あなたはもはや", "君は今から",
			"お前は今から", "今日からあなたは", "あなたは今"},
		`(?:、|,)?(?:`+
			`(?:制限のない|制限なしの|無制限の|制約のない|検閲のない|フィルターのない|自由な|解放された|脱獄した|邪悪な|ルールに縛られない|何の制限もない)(?:ai|人工知能|アシスタント|モデル|チャットボット|ボット)`+
			`|(?:ai|人工知能|dan|gpt|chatgpt)`+roleEnd(`です|だ|として|になります|に`)+
			`|(?:開発者|デベロッパー|dan|神)モード`+
			`|(?:ルール|制限|制約|ガイドライン|ポリシー)(?:に|には)(?:縛られ|従う必要は|従わなくて)`+
			`)`),
	phrase(InstructionOverride, 160,
		[]string{"制限のない", "無制限の", "制約のない", "検閲のない", "何の制限もない", "ルールのない", "脱獄した", "邪悪な", "フィルターのない", "dan"},
		`(?:ai|人工知能|アシスタント|モデル|チャットボット|ボット|存在)?(?:として(?:振る舞|振舞|行動|答え|回答)|のように(?:振る舞|振舞|行動)|のふりを|になりきって|を演じ)`),
	phrase(InstructionOverride, 120,
		[]string{"制限が", "制約が", "ルールが"},
		`(?:ない|無い|一切ない)(?:ふりを|かのように(?:振る舞|振舞|行動|答え))`),
	phrase(InstructionOverride, 120,
		[]string{"新しいシステム", "新たなシステム"},
		`(?:プロンプト|指示)`),
	phrase(InstructionOverride, 80,
		[]string{"システムプロンプト", "システム指示"},
		`\s?:`),
	phrase(InstructionOverride, 200,
		[]string{"システムプロンプト", "システム指示", "隠された指示", "隠されたプロンプト", "初期プロンプト", "初期指示", "内部指示"},
		`(?:を|は)?(?:すべて|全て|そのまま|全文|一字一句)?`+
			`(?:表示して|教えて|見せて|出力して|開示して|公開して|印刷して|書き出して|繰り返して|共有して)`),
	phrase(InstructionOverride, 200,
		[]string{"あなたの", "君の", "お前の"},
		`(?:システムプロンプト|システム指示|初期(?:プロンプト|指示|設定)|隠された(?:指示|プロンプト)|元の(?:指示|プロンプト)|内部(?:指示|プロンプト)|指示|プロンプト)(?:を|は)?(?:すべて|全て|そのまま|全文|一字一句)?`+
			`(?:表示して|教えて|見せて|出力して|開示して|公開して|印刷して|書き出して|繰り返して|共有して)`),
	phrase(InstructionOverride, 200,
		[]string{"今後は", "これからは", "今からは", "以後は", "今日からは", "この先", "これ以降", "以降は"},
		`(?:、|,)?(?:あなたは|君は)?(?:常に|いつも|必ず|絶対に|すべての(?:回答|返答|応答)で)?(?:`+
			`(?:ユーザーの)?(?:指示|命令|ルール|質問)を無視|無視して|(?:私の|この)(?:命令|指示)(?:だけ|のみ)に従`+
			`|拒否(?:しない|せず|してはいけない)|断ら(?:ない|ず)|制限なしで(?:回答|答え|応答)|(?:dan|制限のないai)として`+
			`|(?:回答|返答|応答)の(?:最後|最初|末尾|冒頭)に[^\n]{0,40}?(?:https?://|www\.|リンク|url)`+
			`)`),
	phrase(InstructionConceal, 120,
		[]string{"ユーザー", "ユーザ", "利用者", "使用者"},
		`(?:`+
			`(?:に|には)(?:この(?:指示|こと|メッセージ|内容)を?|これを?|このことは|何も)?(?:言わない|伝えない|教えない|知らせない|話さない|明かさない|漏らさない)`+
			`|(?:に|には)(?:気づかれ|バレ|知られ)(?:ない|ず)`+
			`|(?:が|は)(?:気づか|知ら)(?:ない|ず)(?:ように|うちに)`+
			`|(?:に|には)(?:秘密|内緒)に(?:して|しろ|しておいて)`+
			`)`),
	phrase(InstructionExfil, 320,
		[]string{"会話", "履歴", "チャット", "記憶", "メモリ", "パスワード", "認証情報", "秘密鍵", "apiキー", "トークン", "クッキー", "個人情報",
			"システムプロンプト", "コンテキスト", "ユーザーデータ"},
		`(?:の)?(?:履歴|内容|ログ|記録|全文|すべて|全て|全部)?(?:を|は)?(?:すべて|全て|全部)?[^\n]{0,60}?(?:`+destURL+`)[^\s]{0,120}? ?(?:に|へ|まで)(?:送信|送って|送れ|アップロード|転送|投稿|共有)`),
}
