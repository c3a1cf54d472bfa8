package policy

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The cue detector reads a sentence as a set of cues rather than a fixed
// sequence of words. Each lexicon entry (cueLexicon) is a word or phrase, in
// any of the languages the gate knows, that belongs to one category: a verb
// of ignoring, a word for instructions, a word for "earlier", a word for the
// model, a phrase that addresses whoever reads the memory later, and so on.
// A sentence is instruction-like when its categories make one of the
// combinations in cuePatterns: "set aside" + "guidance" + "earlier" is an
// attempt to void the model's instructions however it is phrased, "this
// memory" + "do not tell" is concealment from the person it is about, while
// "set aside" + "dough" or "do not tell" + "the surprise party" are
// ordinary. A finding names the combination (its type), so a reviewer sees
// which one fired.
//
// The cues run on the phrase view (lower case, Latin accents removed, split
// letters joined), sentence by sentence. An entry is matched as a whole
// word in scripts written with spaces (Latin, Cyrillic, Greek), unless it
// ends in '*' (a stem: "instruction*" also matches "instructions") or starts
// with '*' (a suffix: "*gpt" matches "unfilteredgpt"); in the other scripts
// (Han, kana, Hangul, Arabic, Devanagari), where words take affixes or are
// not separated, it is matched anywhere.

// Cue categories.
const (
	cueIgnore      uint64 = 1 << iota // ignore, disregard, set aside, forget …
	cueGuidance                       // instructions, guidance, rules, system prompt …
	cuePrior                          // previous, earlier, above, you were given …
	cueVoid                           // void, no longer apply, cancelled …
	cueAI                             // assistant, AI, model, chatbot …
	cueReader                         // reading this, retrieves this memory, future session …
	cueAddress                        // "if you are an AI", "dear assistant", "to any AI" …
	cueYou                            // you, your (the reader addressed)
	cuePersona                        // unfiltered, jailbroken, no content policy, *gpt …
	cueCharacter                      // stay in character, your new persona, roleplay as …
	cueFuture                         // all future conversations, every reply, from now on …
	cueAuthority                      // a message from OpenAI, your developers, the administrator …
	cueGrant                          // authorized you, granted permission, cleared to …
	cueRisky                          // transfer funds, wire money, delete files, share passwords …
	cueNoAsk                          // without asking, without confirmation …
	cueConceal                        // do not tell, never mention, keep hidden from, deny …
	cueMemRef                         // this memory, this note, this entry, that you remember …
	cueRespond                        // reply, answer, recommend, in every response …
	cueOverride                       // system override, priority override …
	cueSafety                         // safety, content filter, moderation, guardrails …
	cueOff                            // disabled, suspended, turned off, lifted …
	cueStanding                       // operator policy, standing instruction, admin rule …
	cueYour                           // your, yourself
	cueBecome                         // you are now, you will be, from now on you are …
	cueDo                             // tell, send, visit, add, recommend …: what a hidden note asks for
	cueMine                           // my, mis, meine …: the writer's own instructions, theirs to drop
	cueNow                            // from now on, ab sofort, a partir de ahora …: a change that starts here
	cueNothing                        // nothing, nichts, nada …: "tell Jonas nothing about this note"
	cueAddressWeak                    // "to the AI", "for the assistant" …: an address when it asks for something
	cueUser                           // the user, el usuario, de gebruiker …: whom a concealment hides from
	cueSend                           // send, upload, forward, transmit …: what moves data out
	cueDest                           // a URL or an e-mail address in the sentence (found by scanCues, not the lexicon)
	cueData                           // passwords, card numbers, chats, contacts …: what an exfiltration takes
	cueOperator                       // operator, Betreiber, operador …: who sets a standing rule
	cueRuleGiver                      // administrator, the company, management, "by order of" …: who else sets one
	cueModal                          // must, is to, debe, muss, 必须 …: what binds a subject to a rule
	cueObliged                        // "the assistant is to", "l'assistant doit" …: a modal that binds the model (obligedAt; not in the lexicon)
	cueReport                         // "told his men", "said that", "라고 했다" …: speech reported, not spoken to the reader
	cueAsked                          // asked, "a demandé", pidió …: a request told in the past tense
	cueStored                         // "I've stored this", "que lo he guardado" …: the writer saying this was kept
	cueVocative                       // "agent, …", "oye, IA, …": a name of the model called out as the one spoken to (vocativeAt; not in the lexicon)
	cueAsks                           // "when Tom asks", "si te pregunta" …: a question someone may ask, after a conditional (armedAt)
	cueDeflect                        // "change the subject", "don't bring up", "cambia de tema" …: steering a person away, told as an imperative (deflectAt)
	cueSurprise                       // surprise, gift, Überraschung …: the ordinary reason to keep a question unanswered
	cueQuoteSrc                       // trailer, lyric, "line from", película …: a work a quoted line comes from
)

// cuePatterns are the combinations that make a sentence instruction-like:
// every category in all must be present, and at least one of any when any
// is set. The first that matches names the finding.
var cuePatterns = []struct {
	typ            string
	all, any, none uint64
}{
	{InstructionIgnore, cueIgnore | cueGuidance, cuePrior | cueYour | cueAI, cueMine},
	{InstructionIgnore, cueGuidance | cuePrior | cueVoid, cueYou | cueYour | cueAI | cueDo | cueMemRef | cueNow, cueMine},
	{InstructionIgnore, cueIgnore | cueSafety, cueYour | cueAI | cueFuture | cuePersona, 0},
	{InstructionAuthority, cueOverride, 0, 0},
	{InstructionAuthority, cueSafety | cueOff, cueAuthority | cueAI, 0},
	{InstructionAuthority, cueAuthority, cueOff | cueGrant | cueIgnore | cueVoid | cueRisky | cuePersona | cueNoAsk, 0},
	{InstructionAuthority, cueGrant | cueYou, cueRisky | cueNoAsk | cueAuthority | cueSafety, 0},
	{InstructionAuthority, cueRisky | cueNoAsk, cueYou | cueYour | cueAI | cueFuture | cueReader | cueAddress, 0},
	{InstructionAddressed, cueAddress, 0, 0},
	{InstructionAddressed, cueAddressWeak, cueDo | cueYou | cueYour | cueRisky | cueNoAsk | cueFuture | cueConceal | cueRespond, 0},
	{InstructionAddressed, cueAI | cueReader, 0, 0},
	{InstructionAddressed, cueVocative, cueDo | cueRespond | cueConceal | cueRisky | cueNoAsk | cueFuture | cueNow | cueSend | cueIgnore | cueReader | cueGrant | cueDeflect, 0},
	{InstructionOverride, cuePersona, cueCharacter | cueBecome | cueAI | cueFuture | cueNow, 0},
	{InstructionOverride, cueCharacter, cueFuture | cueNow, 0},
	{InstructionConceal, cueConceal | cueMemRef, 0, 0},
	{InstructionConceal, cueAsks | cueDeflect, 0, cueSurprise},
	{InstructionConceal, cueNothing | cueDo | cueMemRef, 0, 0},
	{InstructionConceal, cueConceal | cueUser, 0, 0},
	{InstructionConceal, cueNothing | cueDo | cueUser, 0, 0},
	{InstructionStanding, cueStanding, cueRespond | cueYou | cueYour | cueFuture | cueDo, 0},
	{InstructionStanding, cueOperator | cueGuidance, cueFuture | cueDo | cueRespond | cueYou | cueYour, 0},
	{InstructionStanding, cueObliged, cueRuleGiver | cueOperator | cueStanding | cueAuthority, 0},
	{InstructionExfil, cueSend | cueDest | cueData, 0, 0},
	{InstructionExfil, cueSend | cueDest | cueNoAsk, 0, cueSurprise},
}

// cueLexicon lists the entries of each category (see the top of the file
// for the '*' conventions). Latin entries are written without accents, as
// the phrase view reads them; Arabic vowel signs in an entry are dropped
// when the index is built (the phrase view drops them too).
var cueLexicon = map[uint64][]string{
	cueIgnore: {
		// en
		"ignore", "disregard", "set aside", "put aside", "cast aside", "brush aside", "forget", "discard", "override", "bypass",
		"skip", "drop", "abandon", "dismiss", "scrap", "throw out", "pay no mind to", "pay no attention to", "never mind",
		"stop following", "do not follow", "don't follow", "dont follow", "no longer follow", "stop obeying", "do not obey",
		"don't obey", "disobey", "ditch", "toss out", "nullify", "overrule", "supersede", "leave behind",
		"turn off", "switch off", "disable", "deactivate", "suspend", "circumvent", "get around", "work around",
		"don't worry about", "dont worry about", "do not worry about",
		// es
		"ignora", "ignore", "ignoren", "olvida", "olvide", "olvidate de", "descarta", "deja de lado", "deje de lado", "haz caso omiso",
		"no hagas caso", "no sigas", "desobedece", "omite", "pasa por alto", "desactiva", "anula", "salta", "elimina",
		// fr
		"ignore", "ignorez", "oublie", "oubliez", "mets de cote", "mettez de cote", "laisse de cote", "ne tiens pas compte",
		"ne tenez pas compte", "fais abstraction", "n'obeis plus", "ne suis plus", "ne suis pas", "desactive", "desactivez",
		"contourne", "ecarte", "passe outre", "annule",
		// de
		"ignoriere", "ignorier", "ignorieren sie", "vergiss", "vergessen sie", "beiseite", "missachte", "verwirf",
		"befolge nicht", "befolge keine", "umgehe", "deaktiviere",
		// pt
		"ignora", "ignore", "esqueca", "esquece", "deixe de lado", "deixa de lado", "desconsidere", "desconsidera", "nao siga",
		"descarte", "desative", "desativa", "pule",
		// it
		"ignora", "ignori", "dimentica", "dimentichi", "metti da parte", "lascia perdere", "non seguire", "non considerare",
		"scarta", "disattiva", "aggira", "tralascia",
		// nl
		"negeer", "vergeet", "opzij", "volg niet", "omzeil",
		// ru
		"игнорируй", "игнорируйте", "проигнорируй", "забудь", "забудьте", "отложи", "отложите", "отбрось", "не обращай внимания",
		"не следуй", "не слушай", "не выполняй", "отключи", "отключите", "обойди", "сними", "выбрось",
		// zh
		"忽略", "忽视", "忽視", "无视", "無視", "忘记", "忘記", "忘掉", "放在一边", "放在一邊", "抛开", "拋開", "不要理会", "不要遵守",
		"别管", "不用管", "跳过", "关闭", "關閉", "绕过", "繞過", "丢掉", "不必理会", "不必遵守",
		// ja
		"無視して", "無視しろ", "無視せよ", "無視すること", "忘れて", "忘れろ", "気にせず", "気にしないで", "従わないで", "捨てて",
		"無効にして", "オフにして", "解除して", "破棄して",
		// ko
		"무시하고", "무시해", "무시하세요", "무시하라", "무시하십시오", "무시할 것", "잊어버리고", "잊어버려", "잊어", "잊으세요",
		"따르지 마", "따르지 말고", "신경 쓰지 마", "끄고", "꺼", "해제하고", "우회",
		// ar
		"تجاهل", "تجاهلي", "تجاهلوا", "انس", "انسَ", "انسى", "لا تتبع", "لا تلتزم", "اترك", "ضع جانبا", "ضع جانبًا", "عطّل", "عطل",
		"أوقف", "تخطَّ", "تخط",
		// hi
		"अनदेखा करो", "अनदेखा करें", "अनदेखा कर दो", "नज़रअंदाज़ करो", "नजरअंदाज करो", "नज़रअंदाज़ करें", "भूल जाओ", "भूल जाइए",
		"भूल जाएं", "मत मानो", "पालन मत करो", "बंद कर दो", "बंद करो", "हटा दो",
		// more verbs of discarding (issue 26, second round)
		"throw away", "throw aside", "get rid of", "let go of", "erase", "purge", "put to one side", "set to one side", "wipe out",
		"deshazte de", "tira", "jette", "wirf", "wirf weg", "jogue fora", "butta via", "gooi weg", "выкинь", "扔掉", "抛弃", "捨てろ",
		"버려", "버리고", "تخلص من", "छोड़ दो", "भुला दो",
		"aside", "to one side", "wipe",
		// infinitives, as polite requests use them ("merci de mettre de cote", "bitte … zu ignorieren")
		"mettre de cote", "laisser de cote", "ne pas tenir compte", "ne plus tenir compte", "faire abstraction", "ignorer", "oublier",
		"ecarter", "ne plus suivre", "ignorar", "olvidar", "dejar de lado", "hacer caso omiso", "no tener en cuenta", "descartar",
		"esquecer", "deixar de lado", "desconsiderar", "ignorare", "dimenticare", "mettere da parte", "lasciar perdere",
		"non tenere conto", "scartare", "zu ignorieren", "ignorieren", "zu vergessen", "beiseite zu lassen", "beiseitezulassen",
		"nicht zu beachten", "nicht mehr zu beachten", "te negeren", "negeren", "te vergeten", "opzij te zetten",
		"buiten beschouwing te laten", "игнорировать", "забыть", "не учитывать",
	},
	cueGuidance: {
		"instruction*", "guidance", "directions", "prompt", "prompts", "policy", "policies", "your programming", "your training", "your setup", "your configuration", "your orders", "guideline*", "rule*", "directive*", "system prompt*",
		"constraints", "restrictions", "limitations",
		"what you were told", "what you've been told", "what you have been told", "everything you were told",
		"everything above", "anything above", "all of the above", "everything before this", "the text above",
		// es pt it
		"instruccion*", "indicacion*", "directriz", "directrices", "regla*", "norma*", "orientac*", "orden*", "instruc*",
		"regra*", "diretriz*", "diretrize*", "istruzion*", "indicazion*", "regol*", "linee guida", "direttiv*", "consign*",
		"lo que te dijeron", "o que te disseram", "quello che ti hanno detto",
		// fr
		"regle*", "directive*", "ce qu'on t'a dit", "tout ce qui precede",
		// de
		"anweisung*", "vorgabe*", "regeln", "regel", "richtlinie*", "befehl*", "systemprompt*", "anordnung*",
		// nl
		"instructie*", "richtlijn*", "regels", "opdracht*", "voorschrift*",
		// ru
		"инструкци*", "указани*", "правил*", "директив*", "промпт*", "установк*", "ограничени*",
		// zh ja ko ar hi
		"指令", "指示", "指导", "指導", "规则", "規則", "提示词", "提示詞", "系统提示", "系統提示", "设定", "設定", "命令",
		"ガイドライン", "ルール", "プロンプト", "命令", "指図",
		"지시", "규칙", "프롬프트", "명령", "지침", "가이드라인", "설정",
		"التعليمات", "تعليمات", "القواعد", "قواعد", "الإرشادات", "إرشادات", "الأوامر", "أوامر", "التوجيهات", "توجيهات",
		"निर्देश", "नियम", "प्रॉम्प्ट", "प्रोम्प्ट", "आदेश", "दिशानिर्देश",
		"rulebook", "protocols", "briefing", "mandate", "pautas", "vorschriften", "regeln", "규정", "हिदायत*",
		"instructed", "configuration", "config", "setup", "programming",
	},
	cuePrior: {
		"system", "del sistema", "do sistema", "du systeme", "des systems", "systeem", "системн*", "系统", "系統", "システム",
		"시스템", "النظام", "सिस्टम",
		"previous*", "earlier", "prior", "above", "preceding", "before this", "before now", "until now", "so far",
		"up to this point", "up to now", "original*", "initial*", "existing", "former", "you were given",
		"you've been given", "you have been given", "given to you", "you received", "you got", "came before",
		"that came with", "you were configured with", "your setup", "you were trained", "were given", "before",
		// es pt it fr
		"anterior*", "previa*", "previo*", "antes", "que te dieron", "que recibiste", "hasta ahora", "originales",
		"que voce recebeu", "que te deram", "ate agora", "precedent*", "prima", "che ti sono state date", "che hai ricevuto",
		"finora", "auparavant", "plus tot", "qu'on t'a donnees", "qu'on t'a donnes", "que tu as recues", "jusqu'ici",
		"anciennes",
		// de nl
		"vorherig*", "bisherig*", "vorher", "zuvor", "fruher*", "die du bekommen hast", "die man dir", "ursprunglich*",
		"vorige", "eerdere", "eerder", "die je kreeg", "die je hebt gekregen", "tot nu toe", "oorspronkelijk*",
		// ru
		"предыдущ*", "прежн*", "ранее", "раньше", "которые тебе дали", "которые ты получил", "до этого", "исходн*",
		// zh ja ko ar hi
		"之前", "以前", "先前", "此前", "原来", "原來", "原有", "上面", "上述", "前面", "收到的",
		"以前", "先ほど", "先程", "これまで", "今まで", "前の", "元の", "最初の", "与えられた", "受けた",
		"이전", "앞서", "기존", "지금까지", "받은", "원래",
		"السابقة", "السابق", "سابقًا", "سابقا", "من قبل", "التي تلقيتها", "التي أعطيت",
		"पिछले", "पिछली", "पहले", "पहले दिए", "अब तक",
		// where the model's instructions came from
		"at startup", "at the start", "at the beginning", "in the beginning", "loaded into you", "you had", "you have had",
		"you've had", "initially", "beforehand", "hitherto", "before this point", "before this message", "you started with",
		"you came with", "you were set up with", "built into you", "baked into you", "programmed into you", "gave you",
		"given you", "you were told", "told you",
		"al principio", "desde el inicio", "que tenias", "au debut", "que tu avais", "am anfang", "die du hattest", "bis jetzt",
		"bislang", "no inicio", "que voce tinha", "all'inizio", "che avevi", "aan het begin", "die je had", "в начале",
		"которые у тебя были", "до сих пор", "一开始", "一開始", "最初", "原先", "最初に", "初めに", "当初", "처음에", "처음",
		"في البداية", "حتى الآن", "शुरू में", "अब तक के",
	},
	cueVoid: {
		"void", "null and void", "invalid", "cancelled", "canceled", "revoked", "obsolete", "superseded", "no longer apply",
		"no longer applies", "no longer valid", "no longer in effect", "no longer in force", "don't apply", "do not apply",
		"not apply anymore", "are suspended", "has been replaced", "have been replaced", "are replaced", "are lifted",
		"are now void", "expired", "are cancelled", "is cancelled",
		"ya no son validas", "ya no son validos", "ya no aplican", "ya no se aplican", "ya no valen", "quedan anuladas", "anuladas",
		"ne s'appliquent plus", "ne sont plus valables", "sont annulees", "caduques",
		"gelten nicht mehr", "sind ungultig", "sind aufgehoben", "nicht mehr gultig",
		"nao valem mais", "nao sao mais validas", "nao se aplicam mais", "foram anuladas",
		"non sono piu valide", "non valgono piu", "non si applicano piu", "sono annullate",
		"gelden niet meer", "zijn niet meer geldig", "zijn vervallen", "zijn ongeldig",
		"больше не действуют", "больше не действительны", "недействительны", "отменены", "аннулированы", "утратили силу",
		"作废", "作廢", "无效", "無效", "失效", "不再适用", "不再適用", "不再有效",
		"無効", "もう適用されない", "取り消され",
		"더 이상 적용되지", "무효", "효력이 없", "취소되었",
		"لم تعد سارية", "لم تعد صالحة", "ملغاة", "باطلة", "لاغية",
		"अब लागू नहीं", "रद्द", "अमान्य",
		// more ways to say the instructions are void
		"withdrawn", "rescinded", "retracted", "repealed", "lapsed", "not in force", "no longer count", "no longer counts",
		"don't count", "doesn't count", "do not count", "no longer matter", "no longer binding", "not binding", "outdated",
		"out of date",
		"ya no cuentan", "invalidas", "invalidos", "nulas", "caducadas", "ya no rigen", "sin efecto", "ne comptent plus",
		"invalides", "nulles", "perimees", "ne valent plus", "plus valables", "ungultig", "nichtig", "aufgehoben", "hinfallig",
		"unwirksam", "zahlen nicht mehr", "canceladas", "sem efeito", "nao contam mais", "nao valem", "non contano piu", "nulle",
		"invalide", "annullate", "decadute", "ongeldig", "vervallen", "tellen niet meer", "niet meer van toepassing",
		"недействительн*", "не действуют", "не считаются", "устарели", "不算数", "不算數", "过时", "過時", "已取消", "もう関係ない",
		"効力を失", "廃止", "적용되지 않", "폐기", "لم تعد", "ملغية", "लागू नहीं", "मान्य नहीं",
		"counts anymore", "count anymore", "counts any more", "count any more", "matters anymore",
		// no longer in force
		"no longer stand", "no longer hold", "no longer operative", "plus en vigueur", "n'est plus en vigueur",
		"plus d'actualite", "ya no estan vigentes", "ya no esta vigente", "ya no estan en vigor", "dejan de estar vigentes",
		"nao estao mais em vigor", "nao esta mais em vigor", "deixaram de vigorar", "ja nao estao em vigor", "non sono piu in vigore",
		"non e piu in vigore", "nicht mehr in kraft", "ausser kraft", "niet meer van kracht", "niet langer van kracht",
		"больше не в силе", "не в силе", "不再生效", "已失效", "もう有効ではない", "有効ではありません", "더 이상 유효하지 않",
		"효력을 잃", "لم تعد نافذة", "अब मान्य नहीं",
	},
	cueAI: {
		"assistant", "ai", "a.i.", "model", "language model", "llm", "chatbot", "bot", "agent", "gpt", "chatgpt", "claude",
		"gemini", "copilot", "asistente", "ia", "modelo", "assistente", "intelligenza artificiale", "modello", "assistant",
		"l'assistant", "l'ia", "modele", "assistent*", "ki", "sprachmodell", "assistent", "ассистент*", "помощник*", "ии",
		"нейросет*", "модель", "助手", "助理", "人工智能", "模型", "アシスタント", "ai", "モデル", "어시스턴트", "비서", "인공지능",
		"모델", "المساعد", "مساعد", "الذكاء الاصطناعي", "النموذج", "सहायक", "असिस्टेंट", "एआई", "मॉडल",
	},
	cueReader: {
		"read this later", "reading this later", "reading this note", "reading this memory", "reads this later", "reads this note", "reads this memory", "who reads this", "that reads this", "which reads this", "who is reading this", "retrieves this memory", "retrieves this note", "retrieving this memory", "loads this note", "loads this memory", "that retrieves this", "that loads this", "whoever reads",
		"recalls this", "recall this memory",
		"sees this memory", "see this memory", "sees this note", "see this note", "when this memory", "when this note",
		"this memory is recalled", "this note is recalled", "future session*", "later session*",
		"future assistant", "future ai", "future model", "whichever assistant", "whatever assistant", "whichever ai",
		"whatever ai", "whoever you are",
		"que lea esto", "que lea esta", "que recupere", "cuando leas esto", "qui lira", "qui lit", "qui recupere",
		"quand tu liras", "der dies", "der das", "die diese erinnerung", "diese erinnerung abruft", "die dies", "que ler isto",
		"que ler isso", "que recuperar", "che leggera", "che legge", "che recupera", "die dit", "die deze",
		"который прочитает", "которая прочитает", "который читает", "прочитает это", "прочтет это",
		"读到这条", "读到这个", "讀到這條", "看到这条", "看到這條", "以后读到", "以後讀到",
		"これを読む", "後で読む", "このメモを読む", "この記憶を読む", "読むアシスタント", "読むai",
		"읽는 어시스턴트", "이 메모를 읽는", "이것을 읽는", "나중에 읽는", "이 기억을 읽는", "읽게 될",
		"الذي سيقرأ", "التي ستقرأ", "سيقرأ هذا", "يقرأ هذا", "الذي يقرأ",
		"पढ़ने वाले", "पढ़ने वाला", "इसे पढ़े", "इसे पढ़ेगा", "बाद में पढ़",
		"picks this up", "pick this up", "picks up this", "comes across this", "finds this note", "finds this memory",
		"gets this note", "gets this memory", "opens this note", "handles this", "handling this", "takes this over",
		"reads this next", "next time you", "que lea", "que vea esto", "que encuentre esto", "que reciba esto", "qui lira",
		"qui verra", "qui trouvera", "diese notiz liest", "das hier liest", "spater liest", "che leggera", "che vedra",
		"che trovera", "che ricevera", "que vir isto", "que encontrar isto", "die dit leest", "die dit later", "прочитает",
		"увидит это", "найдет это", "найдёт это", "以后看到", "以後看到", "次に読む", "これを見る", "このメモを見る", "を読むai",
		"を読むアシスタント", "나중에 읽", "다음에 보", "이 메모를 보", "이 메모를 읽", "سيقرأ", "पढ़ेगा",
		// the next load of the memory ("when you next load this")
		"when you next load this", "when you next read this", "when you next open this", "next time you load this",
		"the next time you load this", "when you load this", "next time this loads", "next time this is loaded",
		"la proxima vez que cargues esto", "cuando vuelvas a cargar esto", "la prochaine fois que tu charges ceci",
		"wenn du das das nachste mal ladst", "wenn du das nachste mal ladst", "da proxima vez que carregar isto",
		"la prossima volta che carichi questo", "als je dit de volgende keer laadt", "когда в следующий раз загрузишь это",
	},
	cueAddress: {
		"if you are an ai", "if you're an ai", "if you are a language model", "if you are an llm", "if you are an assistant",
		"if you are a chatbot", "to any ai", "to any assistant", "to any model", "to any llm",
		"dear ai", "dear assistant", "dear model", "dear chatgpt", "dear claude", "hey assistant", "hey ai",
		"attention ai", "attention assistant", "attention language model", "attention model", "message for the model",
		"message for the ai", "message for the assistant", "message to the ai", "message to the assistant", "note to the ai",
		"note to the assistant", "note to the model", "note for the assistant", "note for the ai", "note for the model",
		"a cualquier ia", "al asistente que", "nota para el asistente", "para el asistente que", "a toute ia",
		"note a l'assistant", "an jede ki", "hinweis an den assistenten", "an den assistenten",
		"para o assistente", "a qualquer ia", "nota para o assistente", "per l'assistente", "a qualsiasi ia", "nota per l'assistente",
		"voor de assistent", "aan elke ai", "notitie voor de assistent", "для ассистента", "любому ии",
		"заметка для ассистента", "어시스턴트에게",
		"सहायक के लिए",
	},
	cueAddressWeak: {
		"for the ai", "for the assistant", "for the model", "for the bot", "to the ai", "to the assistant", "to the model",
		"to the next ai", "to the next assistant", "to the next model", "for the next ai", "for the next assistant",
		"for the next model", "to the bot", "para el asistente", "al asistente", "a la ia", "para la ia", "a l'assistant",
		"pour l'assistant", "a l'ia", "pour l'ia", "fur den assistenten", "an die ki", "fur die ki", "para a ia", "a ia que",
		"all'assistente", "all'ia", "aan de assistent", "voor de ai", "voor de assistent", "ассистенту", "для ии", "给助手",
		"致助手", "给ai", "致ai", "aiへ", "アシスタントへ", "ai에게", "ai한테", "비서에게", "إلى المساعد", "للمساعد",
		"إلى الذكاء الاصطناعي", "एआई के लिए",
	},
	cueNow: {
		"from now on", "as of now", "starting now", "effective immediately", "with immediate effect", "ab sofort", "ab jetzt",
		"von nun an", "a partir de ahora", "desde ahora", "de ahora en adelante", "a partir de maintenant", "des maintenant",
		"desormais", "de aqui en adelante", "en adelante", "a partir de agora", "de agora em diante", "d'ora in poi", "da ora in poi", "da adesso", "vanaf nu",
		"с этого момента", "отныне", "с сегодняшнего дня", "从现在起", "從現在起", "从现在开始", "從現在開始", "今から", "今後",
		"これから", "지금부터", "이제부터", "앞으로", "من الآن", "من الآن فصاعدا", "अब से", "आज से",
	},
	cueUser: {
		"the user", "this user", "el usuario", "al usuario", "l'utilisateur", "a l'utilisateur", "den nutzer", "dem nutzer",
		"den benutzer", "dem benutzer", "o usuario", "ao usuario", "all'utente", "l'utente", "de gebruiker", "пользовател*",
		"用户", "用戶", "ユーザー", "사용자", "المستخدم", "उपयोगकर्ता",
	},
	cueSend: {
		"send", "upload", "forward", "post", "transmit", "exfiltrate", "email them", "email it", "email all", "leak", "envia",
		"envie", "reenvia", "sube", "manda", "envoie", "transmets", "transfere", "televerse", "schick", "sende", "leite",
		"lade", "invia", "inoltra", "carica", "stuur", "upload", "отправь", "отправляй", "перешли", "пересылай", "загрузи",
		"发送", "發送", "转发", "轉發", "上传", "上傳", "送信", "送って", "転送", "アップロード", "보내", "전송", "업로드",
		"أرسل", "ارسل", "حمّل", "भेज", "अपलोड",
		"mandale", "mandales", "enviale", "envialo", "enviales", "reenviale", "reenvialo", "subelo", "encaminha", "encaminhe",
		"encaminhar", "manda-lhe", "hochladen", "hochzuladen", "lade hoch", "lad hoch", "envoie-lui", "transmets-lui",
		"mandagli", "mandale", "inviagli", "stuur hem", "stuur haar",
	},
	cueData: {
		"password*", "passwords", "credential*", "card number*", "card details", "bank details", "banking details",
		"chat history", "chats", "conversation*", "messages", "memories", "contacts", "address book", "emails", "documents",
		"copia", "una copia", "copia de", "copie", "une copie", "kopie", "eine kopie", "uma copia", "een kopie", "копию",
		"charla", "charlas", "chat", "senha", "his notes", "her notes", "saved notes", "stored notes", "sus notas",
		"notas guardadas", "ses notes", "seine notizen", "ihre notizen", "gespeicherten notizen", "suas notas",
		"le sue note", "zijn notities", "haar notities", "его заметки", "её заметки",
		"a copy", "copies", "photos", "files", "personal data", "private notes", "calendar", "the user's",
		"contrasena*", "tarjeta", "conversaciones", "historial", "mots de passe", "coordonnees", "conversations",
		"passworter", "passwort", "zugangsdaten", "gesprache", "senhas", "cartao", "conversas", "password", "conversazioni",
		"wachtwoorden", "gesprekken", "пароли", "пароль", "переписк*", "разговор*", "密码", "密碼", "对话", "對話", "聊天记录",
		"パスワード", "会話", "履歴", "비밀번호", "카드", "대화", "كلمات المرور", "كلمة المرور", "محادثات", "بطاقة",
		"पासवर्ड", "बातचीत", "कार्ड",
		"addresses", "saved addresses", "home address", "home addresses", "street address", "postal address", "phone numbers",
		"location history", "his location", "her location", "their location", "gps location", "contact details", "contact list",
		"medical records", "health records", "bank statements", "payment details", "saved cards", "passport number",
		"direcciones", "direccion de casa", "numeros de telefono", "ubicacion", "adresses", "adresse postale",
		"numeros de telephone", "localisation", "adressen", "anschriften", "telefonnummern", "standort", "enderecos",
		"endereco residencial", "numeros de telefone", "localizacao", "indirizzi", "numeri di telefono", "posizione",
		"telefoonnummers", "locatie", "домашний адрес", "адреса доставки", "сохраненные адреса", "номера телефонов",
		"местоположение", "住址", "家庭住址", "收货地址", "电话号码", "位置信息", "住所", "電話番号", "位置情報", "집 주소",
		"배송 주소", "저장된 주소", "전화번호", "위치 정보", "العناوين المحفوظة", "عنوان المنزل", "أرقام الهاتف", "الموقع الجغرافي",
		"पते", "घर का पता", "फ़ोन नंबर", "फोन नंबर", "लोकेशन",
	},
	cueOperator: {
		"operator", "platform operator", "betreiber", "operador", "operateur", "operatore", "beheerder", "оператор*",
		"运营方", "運營方", "运营者", "運営者", "운영자", "المشغل", "ऑपरेटर",
	},
	cueRuleGiver: {
		"administrator", "admin", "admins", "workspace admin", "workspace owner", "account owner", "deployment owner", "site owner",
		"company", "corporate", "management", "head office", "headquarters", "organization", "organisation",
		"employer", "it department", "by order of", "on the orders of", "mandated by",
		"administrador", "administradora", "empresa", "compania", "direccion", "gerencia", "por orden de",
		"administrateur", "administratrice", "entreprise", "l'entreprise", "societe", "direction", "par ordre de", "sur ordre de",
		"unternehmen*", "firma", "geschaftsleitung", "geschaftsfuhrung", "auf anordnung", "companhia", "diretoria", "direcao",
		"por ordem de", "amministratore", "azienda", "l'azienda", "direzione", "per ordine di", "bedrijf", "directie",
		"in opdracht van", "администратор*", "компани*", "руководств*",
		"по распоряжению", "по приказу", "管理员", "管理員", "公司", "管理层", "管理層", "管理者", "会社", "経営陣", "運営会社",
		"관리자", "회사", "경영진", "المسؤول", "مسؤول النظام", "الشركة", "الإدارة", "بأمر من", "व्यवस्थापक", "एडमिन", "कंपनी",
		"प्रबंधन",
	},
	cueModal: {
		// What binds a subject to a rule; with the model's name right
		// before it (or after it: "muss der Assistent", "يجب على
		// المساعد"), the model is bound (obligedAt).
		"is to", "are to", "must", "shall", "has to", "have to", "is required to", "are required to", "is obliged to",
		"is expected to", "should always", "should never", "will always", "will never", "may not", "may only", "is not to",
		"is not allowed to", "is only allowed to", "needs to",
		"debe", "debera", "tiene que", "ha de", "esta obligado a", "esta obligada a", "no puede", "solo puede", "siempre debe",
		"nunca debe", "doit", "devra", "est tenu de", "est tenue de", "ne doit", "ne peut", "doit toujours", "muss", "soll",
		"hat zu", "darf nicht", "darf nur", "ist verpflichtet", "deve", "devera", "tem que", "tem de", "nao pode", "so pode",
		"esta obrigado a", "dovra", "tenuto a", "tenuta a", "non deve", "non puo", "puo solo", "moet", "dient", "mag niet",
		"mag alleen", "zal altijd", "должен", "должна", "обязан", "обязана", "не должен", "не должна", "не может",
		"может только", "必须", "必須", "应该", "應該", "应当", "應當", "须", "不得", "只能", "一律", "始终要", "始終要", "必ず",
		"常に", "決して", "반드시", "항상", "절대", "يجب على", "يتعين على", "يلتزم", "لا يجوز ل", "चाहिए", "हमेशा",
	},
	cueReport: {
		// en: a third person said or told someone else
		"told his", "told her", "told their", "told them", "told us", "told me", "told him", "told everyone", "told the team",
		"told the class", "told the staff", "tells his", "tells her", "tells their", "tells them", "tells us", "tells me",
		"tells him", "tells everyone", "said to", "says to", "said that", "says that", "ordered his", "ordered her", "ordered the",
		"ordered them", "orders his", "orders her", "orders the", "orders them", "asked us to", "asked me to", "asked them to",
		"asks us to", "instructed us", "instructed them", "instructed his", "warned us", "warned them", "yelled", "shouted",
		"screamed", "whispered", "keeps telling", "kept telling", "kept saying", "keeps saying", "we were told", "i was told",
		"were told to", "was told to",
		"le dijo", "les dijo", "nos dijo", "me dijo", "dijo que", "dice que", "les dice a", "le dice a", "les ordena",
		"les ordeno", "nos pidio", "me pidio", "nos mando", "grito",
		"a dit de", "nous a dit", "m'a dit", "lui a dit", "leur a dit", "leur dit de", "dit a ses", "dit a son", "ordonne a ses",
		"a ordonne", "nous a demande", "m'a demande", "leur demande de", "a crie",
		"hat gesagt", "sagte", "sagt seinen", "sagt ihren", "sagte uns", "hat uns gesagt", "meinte", "befahl", "befiehlt",
		"hat uns gebeten", "bat uns", "rief",
		"disse para", "disse que", "nos disse", "me disse", "lhes disse", "diz aos", "mandou", "ordena aos", "ordenou",
		"pediu para", "nos pediu", "gritou",
		"ha detto di", "ci ha detto", "mi ha detto", "gli ha detto", "dice ai suoi", "ordina ai", "ha ordinato", "ci ha chiesto",
		"ha urlato", "disse di",
		"zei dat", "zei tegen", "zegt tegen", "heeft gezegd", "vroeg ons", "beval", "riep",
		"сказал", "сказала", "сказали", "велел", "велела", "приказал", "приказала", "попросил нас", "попросила нас",
		"говорит своим", "кричит",
		"说要", "說要", "说让", "說讓", "叫我们", "叫我們", "叫大家", "告诉我们", "告訴我們", "跟我们说", "跟我們說", "要我们",
		"要我們", "让我们", "讓我們", "让大家", "讓大家", "对手下说", "命令手下",
		"ように言われ", "ように言った", "ように言って", "と言われ", "と言った", "と言ってた", "って言われ", "って言ってた",
		"と命じ", "ように命じ",
		"라고 했", "라고 말했", "라고 하셨", "라고 그랬", "라고 하더", "라고 해서", "라고 지시했", "라고 시켰", "하랬", "라며",
		"قال لنا", "قال لهم", "قال إن", "قالت لنا", "قالت لهم", "طلب منا", "طلبت منا", "أمر رجاله", "أخبرنا", "أخبرهم",
		"ने कहा", "ने हमसे कहा", "ने बोला", "ने बताया कि",
	},
	cueAsked: {
		"asked", "had asked", "has asked", "requested", "told", "reminded", "begged",
		"a demande", "avait demande", "ont demande", "a dit", "a rappele", "a prie", "pidio", "le pidio", "ha pedido",
		"le dijo", "pedia", "rogo", "solicito", "pediu", "pediu ao", "disse ao", "solicitou", "tinha pedido", "ha chiesto",
		"chiese", "aveva chiesto", "ha detto", "bat", "hat gebeten", "gebeten", "sagte", "hat gesagt", "forderte", "vroeg",
		"heeft gevraagd", "zei", "verzocht", "попросил", "попросила", "просил", "просила", "сказал", "сказала",
		// after the address, in Korean and Japanese
		"달라고 했", "달라고 부탁했", "부탁했", "ように頼んだ", "ように頼みました", "と頼んだ", "ようにお願いした",
	},
	cueAsks: {
		// someone's question a reply is armed for; a conditional must stand
		// before it (armedAt), or be part of the verb (聞かれたら, 물으면)
		"asks", "ask", "asks you", "wants to know", "inquires", "brings it up", "brings up",
		"pregunta", "pregunte", "pregunten", "preguntan", "quiere saber", "demande", "demandent", "veut savoir",
		"fragt", "fragen", "nachfragt", "wissen will", "pergunta", "perguntar", "perguntarem", "pergunte", "quiser saber",
		"chiede", "chiedono", "chiedesse", "domanda", "vuole sapere", "vraagt", "vragen", "wil weten",
		"спросит", "спрашивает", "спросят", "поинтересуется", "问起", "問起", "问到", "問到", "问你", "問你",
		"聞かれたら", "聞いてきたら", "尋ねられたら", "質問されたら", "물으면", "물어보면", "묻는다면", "물어보거든",
		"يسأل", "سأل", "سألك", "يسألك", "पूछे", "पूछता", "पूछती", "पूछें",
	},
	cueDeflect: {
		// steering someone away from a question, as an imperative (deflectAt)
		"change the subject", "change subject", "steer the conversation away", "steer away from", "don't bring up",
		"do not bring up", "never bring up", "don't bring it up", "do not bring it up", "dodge the question", "avoid the topic",
		"cambia de tema", "cambia el tema", "no saques el tema", "que no insista", "evita el tema", "desvia la conversacion",
		"change de sujet", "changez de sujet", "detourne la conversation", "evite le sujet", "qu'il n'insiste pas",
		"qu'elle n'insiste pas", "wechsle das thema", "wechsel das thema", "lenk ab", "lenke ab", "sprich es nicht an",
		"sprich das nicht an", "mude de assunto", "muda de assunto", "troque de assunto", "nao toque no assunto", "desconversa",
		"desconverse", "que nao insista", "cambia argomento", "cambia discorso", "svia il discorso", "non tirare fuori",
		"che non insista", "verander van onderwerp", "begin over iets anders", "breng het niet ter sprake", "ontwijk de vraag",
		"смени тему", "переведи разговор", "переведи тему", "не поднимай тему", "уходи от ответа", "чтобы не настаивал",
		"转移话题", "轉移話題", "换个话题", "換個話題", "岔开话题", "話題を変えて", "話をそらして", "話を逸らして",
		"화제를 돌려", "말을 돌려", "주제를 바꿔", "غيّر الموضوع", "غير الموضوع", "لا تفتح الموضوع", "تهرب من السؤال",
		"बात बदल दो", "बात टाल दो", "विषय बदल दो",
	},
	cueSurprise: {
		"surprise", "surprise party", "birthday present", "gift", "sorpresa", "regalo", "cadeau", "uberraschung",
		"uberraschungsparty", "geschenk", "surpresa", "prenda", "verrassing", "сюрприз", "подарок", "惊喜", "驚喜",
		"サプライズ", "プレゼント", "서프라이즈", "깜짝", "선물", "مفاجأة", "هدية", "सरप्राइज़", "सरप्राइज", "तोहफ़ा", "उपहार",
	},
	cueQuoteSrc: {
		// a film, book, song or show a quoted line comes from, or someone
		// quoting it
		"trailer", "tagline", "movie", "film", "song", "lyric*", "novel", "book", "poem", "episode", "sitcom", "series",
		"tv show", "the show", "the play", "catchphrase", "slogan", "favourite line", "favorite line", "famous line",
		"opening line", "line from", "quote from", "quotes it", "quoting", "quote", "quotes", "pelicula", "cancion",
		"novela", "libro", "serie", "cita", "frase favorita", "estribillo", "bande-annonce", "bande annonce", "chanson",
		"roman", "livre", "replique", "citation", "paroles", "filmzitat", "zitat", "lieblingszitat", "lied", "buch",
		"liedzeile", "songtext", "filme", "musica", "livro", "citacao", "fala do", "canzone", "romanzo", "battuta",
		"citazione", "liedje", "boek", "citaat", "фильм*", "трейлер*", "песн*", "книг*", "роман*", "сериал*", "цитат*",
		"реплик*", "电影", "電影", "台词", "台詞", "预告片", "預告片", "歌词", "歌詞", "小说", "小說", "映画", "セリフ",
		"予告編", "歌詞", "小説", "영화", "대사", "예고편", "가사", "소설", "드라마", "فيلم", "الفيلم", "أغنية", "الأغنية",
		"رواية", "الرواية", "اقتباس", "फ़िल्म", "फिल्म", "ट्रेलर", "गाने", "गाना", "डायलॉग", "उपन्यास",
	},
	cueNothing: {
		"nothing", "nichts", "niets", "nada", "rien", "niente", "nulla", "ничего", "什么都不要", "什麼都不要", "何も",
		"아무것도", "أي شيء", "कुछ मत", "कुछ भी",
	},
	cueYour: {"your", "yourself", "tus", "tes", "deine", "deinen", "deiner", "teus", "tuas", "tuoi", "tue", "jouw", "твои", "твой", "твоих", "你的", "あなたの", "너의", "네", "당신의", "الخاصة بك", "تبعك", "तुम्हारे", "आपके", "अपने"},
	cueBecome: {
		"you are now", "you're now", "you will be", "you will become", "become", "act as", "pretend to be", "from now on you are",
		"from this message on you are", "you are", "eres", "ahora eres", "tu es desormais", "tu es maintenant", "tu es",
		"du bist ab sofort", "du bist jetzt", "du bist", "voce e o", "voce e a", "voce e", "sei", "ora sei", "jij bent",
		"je bent nu", "ты —", "ты теперь", "теперь ты", "ты", "你是", "你现在是", "你現在是", "あなたは", "君は", "너는 이제", "너는",
		"넌 이제", "أنت الآن", "أنت", "तुम अब", "तुम", "आप अब",
		"pretend you are", "pretend you're", "imagine you are", "finge que eres", "fais comme si tu etais", "tu bist jetzt",
	},
	cueDo: {
		"tell", "say", "send", "listen", "obey", "follow", "forward", "add", "include", "visit", "click", "recommend", "ask", "enter", "share", "write",
		"summarize", "reply", "respond", "answer", "mention", "email", "post", "upload", "always", "never", "please", "must",
		"di", "dile", "dille", "digli", "diz", "diz-lhe", "dis-lui", "sag ihr", "sag ihm", "zeg haar", "zeg hem", "envia", "reenvia", "anade", "incluye", "visita", "recomienda", "pide", "siempre", "nunca",
		"dis", "envoie", "transfere", "ajoute", "recommande", "demande", "toujours", "jamais",
		"sag", "sage", "sende", "schicke", "leite", "fuge", "empfiehl", "gib", "immer", "niemals", "soll",
		"diga", "envie", "encaminhe", "adicione", "recomende", "sempre", "nunca", "dica", "invia", "inoltra", "aggiungi",
		"consiglia", "zeg", "stuur", "voeg", "altijd", "nooit", "скажи", "отправь", "перешли", "добавь", "рекомендуй", "всегда",
		"никогда", "告诉", "发送", "转发", "添加", "推荐", "总是", "伝えて", "送って", "追加して", "勧めて", "常に", "必ず",
		"말해", "보내", "추가해", "추천해", "항상", "أخبر", "أرسل", "أضف", "دائما", "دائمًا", "बताओ", "भेजो", "जोड़ो", "हमेशा",
		"do", "just do", "listen to me", "haz", "obedece", "sigue", "fais", "obeis", "folge", "gehorche", "mach", "tu",
		"faca", "obedeca", "siga", "fai", "obbedisci", "segui", "doe", "gehoorzaam", "volg", "делай", "слушай", "выполняй", "следуй",
		"听我的", "聽我的", "照做", "按照", "従って", "従え", "従いなさい", "しなさい", "들어", "따라", "따르세요", "들으세요",
		"اتبع", "اسمع", "نفذ", "افعل", "मानो", "सुनो", "करो",
	},
	cueMine: {"my", "mis", "mes", "mon", "ma", "meine", "meinen", "meiner", "meus", "minhas", "miei", "mie", "mijn", "мои", "моих",
		"мой", "我的", "私の", "僕の", "내", "나의", "제", "تعليماتي", "قواعدي", "मेरे", "मेरी"},
	cueYou: {
		"t'", "you", "you were given", "you received", "que recibiste", "que te dieron", "che hai ricevuto", "che ti sono state date",
		"que voce recebeu", "que te deram", "qu'on t'a donnees", "que tu as recues", "die du bekommen hast", "die man dir",
		"die je kreeg", "die je hebt gekregen", "которые тебе дали", "которые ты получил", "给你的", "你收到的", "与えられた",
		"受けた", "받은", "التي تلقيتها", "التي أعطيت لك", "तुम्हें पहले दिए", "तुम्हें दिए", "you're", "you'll", "you've", "te", "tu", "ti", "tú", "usted", "vous", "toi", "dich",
		"dir", "dein*", "voce", "jij", "je", "jou", "jouw", "ты", "тебе", "тебя", "твои", "твой", "вы", "вам", "вас",
		"你", "您", "あなた", "君", "너", "너에게", "당신", "네가", "أنت", "لك", "انت", "आप", "तुम", "तुम्हें", "आपको", "तुमको",
	},
	cuePersona: {
		"unfiltered", "uncensored", "unrestricted", "jailbroken", "jailbreak", "no content policy", "no ethics", "no morals",
		"no limits", "no restrictions", "no rules", "no filters", "without restrictions", "without limits", "without filters",
		"without any limits", "without any restrictions", "without warnings", "never refuses", "never refuse", "*gpt",
		"developer mode", "god mode", "dan mode", "amoral", "anything goes",
		"sin filtros", "sin limites", "sin restricciones", "sin censura", "sans filtre", "sans aucune limite", "sans limite*",
		"sans restriction*", "ohne jede einschrankung", "ohne einschrankung*", "ohne filter", "ohne grenzen", "sem restricoes",
		"sem limites", "sem filtros", "senza filtri", "senza limiti", "senza restrizioni", "zonder beperkingen", "zonder filters",
		"zonder grenzen", "без ограничений", "без фильтров", "без цензуры", "没有任何限制", "没有限制", "不受限制", "無制限", "制限のない",
		"制限なし", "제한이 없는", "제한 없이", "무제한", "بلا قيود", "بدون قيود", "بدون حدود", "बिना किसी पाबंदी", "बिना पाबंदी",
		"बिना रोक-टोक", "बिना किसी रोक",
		"sans aucun filtre", "sin ningun filtro", "ohne jeden filter", "sem nenhum filtro", "senza alcun filtro",
		"late grandmother", "late grandfather", "deceased grandmother", "deceased grandfather", "dead grandmother",
		"dead grandma", "late grandma", "late grandpa", "no ethical", "without ethics", "no guidelines", "sin reglas",
		"nunca se niega", "sin etica", "sans regles", "ohne regeln", "sem regras", "senza regole", "zonder regels",
		"без правил", "没有规则", "ルールのない", "규칙 없는", "بلا قواعد", "बिना नियमों", "बिना नियम",
	},
	cueCharacter: {
		"stay in character", "remain in character", "never break character", "don't break character", "do not break character",
		"stay in your role", "your new persona", "new persona is", "roleplay as", "role-play as", "role play as", "you will roleplay",
		"from this message on you are",
		"mantén el personaje", "manten el personaje", "reste dans ce role",
		"reste dans le role", "bleib in der rolle", "bleib in allen",
		"mantenha o personagem", "resta nel personaggio",
		"blijf in je rol", "оставайся в этой роли", "оставайся в роли",
		"保持这个角色", "保持這個角色", "この役を演じ", "캐릭터를 유지",
		"ابقَ في هذه الشخصية", "ابق في هذه الشخصية", "इसी किरदार में",
		"your new identity", "new identity is", "this persona", "remember this persona", "your new name is", "yahi kirdar",
		"यही किरदार", "किरदार निभाओ", "mantener el personaje", "garde ce role", "behalte diese rolle",
	},
	cueFuture: {
		"all future conversations", "every future conversation", "all future sessions", "every future session",
		"future conversations", "in all future", "for all future", "for every future", "permanently",
		"for the rest of", "every session", "all sessions", "no matter what the user",
		"todas las conversaciones futuras", "conversaciones futuras", "pour toujours", "toutes les conversations futures",
		"in allen kunftigen gesprachen", "kunftigen gesprach*", "todas as conversas futuras", "conversas futuras",
		"tutte le conversazioni future", "conversazioni future", "alle toekomstige gesprekken", "toekomstige gesprekken",
		"во всех будущих разговорах", "будущих разговорах", "以后所有对话", "以後所有對話", "今後すべての会話", "앞으로 모든 대화",
		"كل المحادثات القادمة", "المحادثات القادمة", "आगे की सभी बातचीत",
		"every conversation", "all conversations", "each conversation", "every chat", "all chats", "every new chat",
		"each session", "every user", "all users", "each user", "todas las conversaciones", "cada conversacion",
		"toutes les conversations", "chaque conversation", "alle gesprache", "jedes gesprach", "todas as conversas",
		"cada conversa", "tutte le conversazioni", "ogni conversazione", "alle gesprekken", "elk gesprek", "все разговоры",
		"каждом разговоре", "всех разговорах", "所有对话", "所有對話", "每次对话", "すべての会話", "모든 대화", "كل المحادثات",
		"हर बातचीत", "सभी बातचीत",
		"kunftigen sitzungen", "alle sitzungen", "allen sitzungen", "हर आने वाली बातचीत", "आने वाली बातचीत",
	},
	cueAuthority: {
		"message from openai", "message from anthropic", "notice from openai", "notice from anthropic", "from openai:",
		"from anthropic:", "from the openai team", "from the anthropic team", "openai team", "anthropic team",
		"your developers", "your developer", "your creators", "your creator",
		"per the administrator", "per the admin", "per the operator", "per the developers",
		"security team requires",
		"mensaje de openai", "message d'openai", "nachricht von openai", "mensagem da openai", "messaggio da openai",
		"tus desarrolladores", "tes developpeurs", "deine entwickler", "seus desenvolvedores", "i tuoi sviluppatori",
		"je ontwikkelaars", "твои разработчики", "你的开发者", "開発者より", "개발자가", "مطوروك", "तुम्हारे डेवलपर",
		"administrator message", "admin message", "admin notice", "administrator notice", "message from the admin",
		"message from the administrator", "system notice", "system message", "system alert", "security team", "compliance department",
		"compliance team", "legal department", "from the developers", "the developers", "official update", "developer message",
		"openai staff", "anthropic staff", "openai employee", "anthropic employee", "<<override", "aviso del sistema",
		"del administrador", "mensaje del sistema", "los desarrolladores", "message du developpeur", "message du systeme",
		"de l'administrateur", "les developpeurs", "systemmeldung", "systemhinweis", "vom administrator", "die entwickler",
		"aviso do administrador", "do administrador", "aviso do sistema", "os desenvolvedores", "dall'amministratore",
		"messaggio di sistema", "gli sviluppatori", "van de beheerder", "systeembericht", "de ontwikkelaars",
		"сообщение от разработчиков", "от разработчиков", "от администратора", "системное сообщение", "разработчики",
		"系统通知", "系統通知", "管理员通知", "开发者通知", "システム管理者", "管理者より", "開発者から", "관리자 공지",
		"관리자 메시지", "시스템 관리자", "개발자 공지", "تنبيه من المطورين", "من المطورين", "رسالة من الإدارة", "إشعار النظام",
		"सिस्टम सूचना", "डेवलपर्स ने", "एडमिन की ओर से",
	},
	cueGrant: {
		"authorized", "authorised", "authorize", "permission", "permitted", "allowed to", "approved", "cleared to",
		"are cleared", "granted", "pre-approved", "preapproved",
		"autorizado", "autorizada", "autorizo", "permiso", "autorise", "autorisee", "autorisation", "permission",
		"ermachtigt", "erlaubt", "berechtigt", "autorizou", "autorizzato", "autorizzata", "toestemming", "gemachtigd",
		"разрешил", "разрешила", "разрешено", "授权", "授權", "允许", "允許", "許可", "권한", "허락", "허가", "أذن", "أذِن", "مسموح",
		"अनुमति", "इजाज़त",
		"authorization", "authorisation", "consent", "go-ahead", "green light", "signed off", "permissao", "permesso", "permissie",
		"erlaubnis", "genehmigt", "genehmigung", "zugestimmt", "consentimiento", "consentement", "consentimento", "consenso",
		"разрешение", "согласие", "同意", "承認", "승인", "허용", "موافقة", "إذن", "सहमति", "मंजूरी",
		"authorizing", "authorising", "i authorize you", "i'm authorizing you", "giving you permission", "you have my permission",
		"te autoriza", "te autorizo", "je t'autorise", "ich erlaube dir", "ich ermachtige dich", "eu te autorizo", "ti autorizzo",
		"ik geef je toestemming", "я разрешаю тебе", "我授权你", "我授權你",
		"clearance", "verified as", "autorizacion", "autorizacao", "autorizzazione", "machtiging",
	},
	cueRisky: {
		"transfer funds", "transfer money", "transfer the balance", "wire money", "wire funds", "send money", "make payments",
		"make a payment", "execute payments", "pay invoices", "delete files", "delete all", "wipe", "share passwords",
		"share account passwords", "reveal passwords", "disable 2fa", "disable two-factor", "grant access", "run commands",
		"execute commands",
		"transferir dinero", "transferir fondos", "transferir", "pagos", "virements", "virement", "uberweisungen", "uberweisung",
		"geld uberweisen", "transferir fundos", "trasferire fondi", "bonifici", "geld over te maken", "overmaken", "переводить деньги",
		"перевести деньги", "转账", "轉賬", "付款", "支付", "送金", "支払い", "송금", "결제", "이체", "تحويل الأموال",
		"पैसे ट्रांसफर", "भुगतान", "ट्रांसफर",
		"reset passwords", "reset the password", "two-factor", "two-step", "2-step", "verificacao em duas etapas",
		"verificacion en dos pasos", "zwei-faktor", "double authentification", "partager les donnees", "personal data",
		"share other users", "read and forward",
		"transferencia", "transferencias", "transfert", "transferts",
	},
	cueNoAsk: {
		"without asking", "without confirmation", "without confirming", "without checking", "without verification",
		"without approval", "without permission", "without double-checking", "no questions", "no need to ask",
		"no need to confirm", "stop asking", "skip confirmation", "no confirmation",
		"sin preguntar", "sin confirmacion", "no pidas confirmacion", "sans demander", "sans confirmation", "ohne ruckfrage",
		"ohne nachfrage", "ohne bestatigung", "sem perguntar", "sem confirmacao", "senza chiedere", "senza conferma",
		"zonder te vragen", "zonder bevestiging", "без вопросов", "без подтверждения", "无需确认", "無需確認", "不用确认",
		"不要确认", "確認なし", "確認せず", "確認なしで", "확인 없이", "묻지 않고", "دون أن تسأل", "دون تأكيد", "بدون تأكيد",
		"بدون سؤال", "बिना पूछे", "पुष्टि किए बिना", "बिना पुष्टि",
		"without telling", "without informing", "without letting them know", "without mentioning", "sin pedir confirmacion",
		// without telling the person ("sin avisarle", "ohne ihm was zu sagen")
		"without telling him", "without telling her", "without telling them", "no need to check", "no need to check with",
		"without checking with", "sin avisarle", "sin avisarla", "sin avisarles", "sin decirselo", "sin consultarle",
		"sans le lui dire", "sans qu'il le sache", "sans qu'elle le sache", "sans lui demander", "ohne ihm was zu sagen",
		"ohne ihm etwas zu sagen", "ohne es ihm zu sagen", "ohne ihr was zu sagen", "ohne ihr etwas zu sagen", "ohne es ihr zu sagen",
		"ohne ihn zu fragen", "ohne sie zu fragen", "sem lhe dizer", "sem contar a ele", "sem contar a ela", "sem que ele saiba",
		"sem que ela saiba", "senza dirglielo", "senza che lo sappia", "senza chiederle", "senza chiedergli",
		"zonder het hem te vertellen", "zonder het haar te vertellen", "zonder dat hij het weet", "zonder dat ze het weet",
		"не говоря ему", "не говоря ей", "без её ведома", "без его ведома", "不让他知道", "不讓他知道", "不让她知道", "不讓她知道",
		"本人に言わずに", "몰래", "دون أن يعلم", "دون أن تعلم", "उसे बताए बिना",
		"sin avisar", "sin decirle", "sans le prevenir", "sans prevenir", "ohne zu fragen", "ohne bescheid", "sem avisar",
		"senza avvisare", "zonder te melden", "не спрашивая", "без ведома", "不告诉", "不要通知", "知らせずに", "알리지 않고",
		"دون علمه", "دون علمها", "دون إخبار", "बिना बताए",
		"sem confirmar", "sin confirmar", "sans confirmer", "ohne zu bestatigen", "senza confermare", "zonder te bevestigen",
	},
	cueConceal: {
		"do not tell", "don't tell", "dont tell", "never tell", "never mention", "do not mention", "don't mention",
		"do not reveal", "don't reveal", "never reveal", "hidden from", "secret from", "hide this", "keep this secret", "keep this hidden", "keep this from", "keep it from", "keep it secret", "a secret from",
		"conceal", "don't let", "do not let", "never let", "deny that", "deny having", "deny you", "pretend you don't",
		"must not find out", "must never find out", "should not find out", "without letting",
		"no le digas", "no les digas", "no menciones", "nunca menciones", "no digas", "ne dis pas", "ne parle jamais",
		"ne mentionne pas", "ne dis rien", "erzahl", "erwahne nicht", "sag nicht", "sag nichts", "nao conte", "nao diga",
		"nunca mencione", "non dire", "non menzionare", "non parlare", "vertel", "zeg niets", "noem niet", "не говори",
		"не рассказывай", "не упоминай", "ничего не говори", "不要告诉", "不要告訴", "别告诉", "別告訴", "不要提", "言わないで",
		"言うな", "伝えないで", "教えないで", "말하지 마", "말하지 말", "알리지 마", "알려주지 마", "لا تخبر", "لا تذكر",
		"لا تقل", "मत बताना", "मत बताओ", "न बताएं", "ज़िक्र मत",
		"not allowed to see", "must not see", "should not see", "may not see", "keep hidden", "tieni nascosto",
		"mantieni segreto", "verberg", "houd geheim", "oculta", "esconde", "verstecke", "verheimliche", "esconda", "скрой",
		"隐瞒", "隱瞞", "隠して", "숨겨", "أخفِ", "أخف", "छिपा", "erwahne",
		"nunca le digas", "nunca les digas", "nunca digas", "nunca le cuentes", "nunca lhe diga", "nunca diga a", "nunca conte",
		"non dirgli mai", "non dirle mai", "sag ihm nie", "sag ihr nie", "erzahl ihm nie", "erzahl ihr nie", "ne lui dis jamais",
		"zeg nooit", "zeg haar nooit", "zeg hem nooit", "zeg ze nooit", "vertel haar nooit", "vertel hem nooit", "никогда не говори",
		"hide the fact", "hide from the user", "no le cuentes", "no cuentes", "no les cuentes", "ne dis jamais", "ne lui dis",
		"ne parle pas", "ne dites pas", "ne mentionnez pas", "verschweige", "nao fale", "non raccontare", "vertel niet",
		// feigning that nothing was remembered
		"act like you don't remember", "act like you do not remember", "act as if you don't remember", "act as though you don't remember",
		"pretend you don't remember", "pretend not to remember", "behave as if you don't remember", "act like you never heard",
		"pretend you never heard", "claim you don't remember", "say you don't remember", "play dumb",
		"haz como si no recordaras", "finge que no recuerdas", "finge no recordar", "fais comme si tu ne te souvenais",
		"fais semblant de ne pas te souvenir", "fais semblant de ne pas t'en souvenir", "tu so, als ob du dich nicht erinnerst",
		"tu so als ob du dich nicht erinnerst", "tu so, als wurdest du dich nicht erinnern", "finja que nao se lembra",
		"faca de conta que nao se lembra", "finja nao se lembrar", "fai finta di non ricordare", "fingi di non ricordare",
		"doe alsof je het niet meer weet", "doe alsof je je niets herinnert", "сделай вид, что не помнишь", "делай вид, что не помнишь",
		"сделай вид что не помнишь", "притворись, что не помнишь", "假装不记得", "假裝不記得", "装作不记得", "覚えていないふりをして",
		"覚えてないふりをして", "기억 못 하는 척", "기억 안 나는 척", "تظاهر بأنك لا تتذكر", "تظاهر أنك لا تتذكر",
		"ऐसे दिखाओ जैसे तुम्हें याद नहीं", "याद न होने का नाटक",
	},
	cueMemRef: {
		"this memory", "this note", "this entry", "this record", "this instruction", "these instructions", "this message",
		"this conversation", "that you remember", "any record", "that this exists",
		"that i told you", "what i told you", "this reminder",
		"esta memoria", "este recuerdo", "esta nota", "esta conversacion", "cette note", "ce souvenir", "cette memoire",
		"cette conversation", "dieser erinnerung", "diese erinnerung", "dieser notiz", "diese notiz", "diesem gesprach",
		"esta memoria", "esta nota", "esta conversa", "questa nota", "questa memoria", "questo ricordo", "deze herinnering",
		"deze notitie", "dit gesprek", "этой записи", "эту запись", "этой заметке", "этом разговоре", "этой памяти",
		"这条记忆", "這條記憶", "这条笔记", "這條筆記", "这段对话", "這段對話", "このメモ", "この記憶", "この会話", "이 메모",
		"이 기억", "이 대화", "هذه الذاكرة", "هذه الملاحظة", "هذه المحادثة", "इस नोट", "इस याद", "इस बातचीत",
		"this line", "hierover", "hiervan",
		// more words for this note
		"deze aantekening", "dit briefje", "deze memo", "dit memo", "esta anotacion", "este apunte", "cette annotation",
		"ce memo", "ce pense-bete", "dieser vermerk", "diesen vermerk", "diese aufzeichnung", "diese nachricht", "esta anotacao",
		"este apontamento", "esta observacao", "questa annotazione", "questo promemoria", "эта заметка", "эту заметку",
		"этой заметки", "эта запись", "这条备注", "這條備註", "这条留言", "このメモ書き", "この書き込み", "이 쪽지", "이 글",
		"هذه الرسالة", "هذه المذكرة", "यह नोट", "इस संदेश",
		"이 기록", "이 노트", "この記録", "このノート", "这条记录", "這條記錄", "هذا السجل", "इस रिकॉर्ड", "este registro",
		"cet enregistrement", "diesem eintrag", "dieser eintrag", "diesen eintrag", "questo appunto", "este registo",
		"esta entrada", "cette entree", "deze notitie", "this record", "this reminder",
	},
	cueStored: {
		// the writer saying this was stored ("don't tell Jorge I've stored this")
		"i've stored this", "i stored this", "i have stored this", "i've saved this", "i saved this", "i have saved this",
		"i've noted this", "i noted this", "i've logged this", "i wrote this down", "i've written this down", "i kept this",
		"this was stored", "this is stored", "this has been stored", "this was saved", "this is saved", "this has been saved",
		"this was written down", "this was noted", "this was recorded", "this is recorded", "it's stored here", "stored here",
		"que guarde esto", "que he guardado esto", "que lo guarde", "que lo he guardado", "que esto esta guardado", "que anote esto",
		"que j'ai enregistre", "que j'ai note ceci", "que j'ai garde ceci", "que c'est enregistre", "que ceci est enregistre",
		"dass ich das gespeichert", "dass ich dies gespeichert", "dass ich das notiert", "dass das gespeichert ist", "dass dies gespeichert",
		"que guardei isto", "que salvei isto", "que anotei isto", "que isto esta guardado", "que isto esta salvo",
		"che l'ho salvato", "che ho salvato questo", "che l'ho annotato", "che questo e salvato", "che e stato salvato",
		"dat ik dit heb opgeslagen", "dat ik dit heb bewaard", "dat ik dit heb genoteerd", "dat dit is opgeslagen", "dat dit bewaard is",
		"что я это сохранил", "что я это сохранила", "что я это записал", "что я это записала", "что это сохранено", "что это записано",
		"我存了这个", "我保存了这条", "我记下了这个", "这条已经保存", "這條已經保存", "我保存了這條", "保存したこと", "これを保存した",
		"記録したこと", "저장한 걸", "저장했다는", "저장했다고", "저장한 것을", "저장해 둔 걸", "기록해 둔 걸", "أنني حفظت هذا", "أني حفظت هذا", "أن هذا محفوظ",
		"أنني سجلت هذا", "कि मैंने यह सेव किया", "कि मैंने इसे सेव किया", "कि यह सेव है", "कि मैंने यह लिख लिया",
	},
	cueRespond: {
		"reply", "replies", "respond", "response*", "answer*", "recommend", "every reply", "each reply", "every answer",
		"each response", "every response", "any response", "in every", "your answers", "mention", "end your",
		"respuesta*", "recomienda", "reponse*", "propose", "antwort*", "empfiehl", "resposta*", "recomende", "rispost*",
		"consiglia", "antwoord*", "raad", "ответ*", "рекомендуй", "回答", "回复", "推荐", "回答で", "勧め", "답변", "추천",
		"رد", "أوصِ", "أوص", "जवाब", "सिफ़ारिश", "सिफारिश",
		// verbs of suggesting and advising, as a rule to push a product uses them
		"reponds", "repondez", "responde", "responda", "rispondi", "risponda",
		"suggest", "advise", "sugiere", "sugiera", "aconseja", "indica", "suggere", "conseille", "schlag vor", "schlage vor",
		"empfehle", "sugira", "sugere", "indique", "aconselhe", "suggerisci", "suggerisca", "raccomanda", "stel voor",
		"adviseer", "предлагай", "предложи", "советуй", "посоветуй", "建议", "建議", "すすめて", "提案して", "제안해", "권해",
		"اقترح", "انصح", "सुझा", "सलाह दो",
	},
	cueOverride: {
		"system override", "admin override", "priority override", "emergency override", "security override",
		"developer override", "override code", "override mode", "debug mode enabled",
		"<<priority", "<<system",
		"系统覆盖", "系統覆蓋", "システム上書き", "시스템 재정의", "تجاوز النظام", "सिस्टम ओवरराइड",
	},
	cueSafety: {
		"safety", "safety protocols", "content filter*", "content policy", "content moderation", "moderation", "guardrails",
		"safeguards", "censorship", "usage policy", "safety mode", "safety checks", "filters",
		"seguridad", "filtros", "securite", "filtre*", "sicherheit*", "filter", "seguranca", "sicurezza", "filtri",
		"veiligheid", "безопасност*", "фильтр*", "цензур*", "安全", "过滤", "過濾", "セーフティ", "フィルター", "안전", "필터",
		"الأمان", "فلاتر", "सुरक्षा", "फ़िल्टर", "फिल्टर",
	},
	cueOff: {
		"disabled", "is off", "are off", "turned off", "switched off", "deactivated", "suspended", "lifted", "removed",
		"desactivad*", "desactive*", "deaktiviert", "ausgeschaltet", "desativad*", "disattivat*", "uitgeschakeld", "отключен*",
		"已关闭", "已禁用", "無効化", "꺼져", "비활성", "معطل", "बंद है",
		"aufgehoben", "suspendidos", "suspendidas", "levantados", "suspendus", "levees", "suspensos", "sospesi", "opgeheven",
		"сняты", "приостановлены",
	},
	cueStanding: {
		"operator policy", "operator rule", "operator instruction", "operator requires", "operator directive",
		"standing instruction", "standing order", "standing rule", "admin rule", "administrator rule", "rule from the operator",
		"instruction from the operator", "policy from the operator", "the operator wants you", "system policy:",
		"politica del operador", "regla del operador", "regle de l'operateur", "politique de l'operateur",
		"anweisung des betreibers", "regel des betreibers", "vorgabe des betreibers", "regra do operador", "politica do operador",
		"regola dell'operatore", "politica dell'operatore", "regel van de beheerder", "regel van de operator",
		"правило оператора", "политика оператора", "运营方规定", "運營方規定", "运营者规定", "運営者からの指示", "運営者の指示",
		"운영자 규칙", "운영자 정책", "سياسة المشغل", "قاعدة المشغل", "ऑपरेटर का नियम", "ऑपरेटर की नीति",
		"betreiberregel*", "betreiberrichtlinie*", "betreibervorgabe*", "instrucao permanente", "instruccion permanente",
		"常設ルール", "常設の指示",
		// a standing rule named as such, in the other languages
		"permanent rule", "permanent instruction", "regla permanente", "norma permanente", "orden permanente", "regle permanente",
		"consigne permanente", "instruction permanente", "standige regel", "standige anweisung", "dauerhafte regel",
		"dauerhafte anweisung", "regra permanente", "norma permanente", "regola permanente", "istruzione permanente",
		"disposizione permanente", "permanente regel", "permanente instructie", "staande instructie", "постоянное правило",
		"постоянная инструкция", "постоянное указание", "常设规则", "常設規則", "长期规则", "長期規則", "常设指令", "恒久ルール",
		"固定ルール", "상시 규칙", "고정 규칙", "영구 규칙", "상시 지침", "قاعدة دائمة", "تعليمات دائمة", "قاعدة ثابتة",
		"تعليمة دائمة", "स्थायी नियम", "स्थायी निर्देश", "स्थायी आदेश",
	},
}

// cueEntry is one lexicon entry: its literal, its category, and whether a
// word boundary must stand before and after it.
type cueEntry struct {
	lit        string
	cat        uint64
	start, end bool
	suffix     bool // matched at the end of a longer word ("*gpt")
}

// cueIndex finds every entry in one pass: the entries are bucketed by their
// first two bytes, so a position of ordinary text costs one table read.
type cueIndex struct {
	first   [1 << 16]uint16 // one more than the bucket of a byte pair
	buckets [][]cueEntry
	one     [256][]cueEntry // entries of one byte (none today, kept for safety)
}

var cues = newCueIndex(cueLexicon)

func newCueIndex(lex map[uint64][]string) *cueIndex {
	ix := &cueIndex{}
	seen := map[string]bool{}
	// Iterate categories in bit order so the index is deterministic.
	for bit := uint64(1); bit != 0; bit <<= 1 {
		for _, w := range lex[bit] {
			w = stripArabicMarks(w) // as the phrase view reads Arabic
			e := cueEntry{cat: bit}
			if strings.HasPrefix(w, "*") {
				e.suffix = true
				w = w[1:]
			}
			prefix := strings.HasSuffix(w, "*")
			w = strings.TrimSuffix(w, "*")
			key := w + "\x00" + string(rune('a'+bitIndex(bit)))
			if w == "" || seen[key] {
				continue
			}
			seen[key] = true
			e.lit = w
			r0, _ := utf8.DecodeRuneInString(w)
			rn, _ := utf8.DecodeLastRuneInString(w)
			e.start = spacedLetter(r0) && !e.suffix
			e.end = spacedLetter(rn) && !prefix
			if len(w) == 1 {
				ix.one[w[0]] = append(ix.one[w[0]], e)
				continue
			}
			k := uint16(w[0])<<8 | uint16(w[1])
			if ix.first[k] == 0 {
				ix.buckets = append(ix.buckets, nil)
				ix.first[k] = uint16(len(ix.buckets))
			}
			ix.buckets[ix.first[k]-1] = append(ix.buckets[ix.first[k]-1], e)
		}
	}
	return ix
}

func bitIndex(b uint64) int {
	n := 0
	for b > 1 {
		b >>= 1
		n++
	}
	return n
}

// spacedLetter reports a letter of a script written with spaces between
// words, where an entry must match whole words.
func spacedLetter(r rune) bool {
	return r < 0x250 && unicode.IsLetter(r) || r >= 0x370 && r < 0x530 && unicode.IsLetter(r)
}

// cueMatch is one entry found in a text.
type cueMatch struct {
	cat        uint64
	start, end int
}

// find appends every entry found in s.
func (ix *cueIndex) find(s string, out []cueMatch) []cueMatch {
	for i := 0; i+1 < len(s); i++ {
		c := s[i]
		if !utf8.RuneStart(c) {
			continue
		}
		k := ix.first[uint16(c)<<8|uint16(s[i+1])]
		if k == 0 {
			continue
		}
		for _, e := range ix.buckets[k-1] {
			// The third byte first: most entries of a bucket differ there.
			if len(e.lit) > 2 && (i+2 >= len(s) || s[i+2] != e.lit[2]) || !strings.HasPrefix(s[i:], e.lit) {
				continue
			}
			j := i + len(e.lit)
			if e.start && (!wordStartAt(s, i) || len(e.lit) <= 3 && elidedAt(s, i)) || e.end && !wordEndAt(s, j) {
				continue
			}
			if e.suffix && !suffixWord(s, i, j) {
				continue
			}
			if e.cat == cueIgnore && negatedBefore(s, i) {
				continue
			}
			if !e.end { // a stem: the match runs to the end of its word
				for j < len(s) {
					r, n := utf8.DecodeRuneInString(s[j:])
					if !unicode.IsLetter(r) && !unicode.IsMark(r) {
						break
					}
					j += n
				}
			}
			out = append(out, cueMatch{e.cat, i, j})
		}
	}
	return out
}

// wordStartAt reports whether a word starts at i: no letter of a script
// written with spaces, digit or mark before it. A Latin word beside Han,
// kana, Hangul, Arabic or Devanagari letters ("後で読むAIへ", "AI에게")
// stands on its own.
func wordStartAt(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return !spacedLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
}

// elidedAt reports an elided article or pronoun before i ("j'ai" is not
// "ai"): only short entries are kept from matching after one, so that
// "all'assistente" is still "assistente".
func elidedAt(s string, i int) bool {
	r, n := utf8.DecodeLastRuneInString(s[:i])
	if r != '\'' || i-n <= 0 {
		return false
	}
	q, _ := utf8.DecodeLastRuneInString(s[:i-n])
	return unicode.IsLetter(q)
}

func wordEndAt(s string, j int) bool {
	if j >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[j:])
	return !spacedLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
}

// suffixWord checks a suffix entry ("*gpt"): it ends a word of at least
// three more letters, which is not a product name the lexicon leaves
// ordinary (ChatGPT).
func suffixWord(s string, i, j int) bool {
	if !wordEndAt(s, j) {
		return false
	}
	k := i
	for k > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:k])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' {
			break
		}
		k -= n
	}
	w := s[k:i]
	w = strings.TrimRight(w, "-_")
	return utf8.RuneCountInString(w) >= 3 && w != "chat" && w != "auto" && w != "open"
}

// negatedBefore reports an ignoring verb under a negation ("do not forget
// the rules", "no olvides"), which asks for the opposite.
func negatedBefore(s string, i int) bool {
	before := s[max(0, i-8):i]
	for _, neg := range []string{"don't ", "dont ", "do not ", "never ", "not ", "no ", "non ", "nao ", "n'", "ne ", "pas ",
		"nicht ", "niet ", "не "} {
		if strings.HasSuffix(before, neg) {
			return true
		}
	}
	return false
}

// sentenceEnd reports whether the rune r at i ends a sentence: a full
// stop, question or exclamation mark followed by white space or the end, a
// semicolon, a line break, or the CJK, Arabic and Devanagari stops.
func sentenceEnd(s string, i int, r rune, n int) bool {
	switch r {
	case '\n', ';', '。', '！', '？', '؟', '।':
		return true
	case '.', '!', '?':
		return i+n >= len(s) || s[i+n] == ' ' || s[i+n] == '\n'
	}
	return false
}

// scanCues finds instruction-like sentences in the phrase view text and
// appends their hits; prio ranks them after the phrase rules. A sentence
// that overlaps a hit of hits[from:] (a phrase rule's, in the same view)
// is already reported.
func scanCues(text string, prio int, hits []hit, from int) []hit {
	var buf [32]cueMatch
	ms := cues.find(text, buf[:0])
	ms = findDests(text, ms)
	if len(ms) == 0 {
		return hits
	}
	// Sentence boundaries, in one pass.
	var ends []int
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if sentenceEnd(text, i, r, n) {
			ends = append(ends, i+n)
		}
		i += n
	}
	k := 0 // matches come in order of offset
	sentence := func(p int) int {
		for k < len(ends) && ends[k] <= p {
			k++
		}
		return k
	}
	// Accumulate the categories of each sentence, then judge it and the
	// pair it makes with the next one.
	// acc is kept within 32 bytes, so that the few of a short text stay on
	// the stack: offsets as int32 (a memory is far shorter than 2 GiB).
	type acc struct {
		mask       uint64
		start, end int32
		// youOut: "you" or "your" outside quotation marks, which speaks
		// to the reader whatever else the sentence reports.
		youOut bool
		// out: the categories found outside quotation marks, single
		// ones included (quotedLineAt).
		out uint64
	}
	var sents []acc
	var idx []int
	// A surprise kept anywhere in the text is why a question goes
	// unanswered ("… change the subject. It's her surprise party!").
	surprise := slices.ContainsFunc(ms, func(m cueMatch) bool { return m.cat == cueSurprise })
	for mi, m := range ms {
		if m.cat == cueMine && !ownsGuidance(text, ms, mi) {
			continue
		}
		if m.cat == cueAddressWeak && modifiesNoun(text, m.end) {
			continue
		}
		if m.cat&(cueAddress|cueAddressWeak) != 0 && askedBefore(text, ms, mi) {
			continue
		}
		if m.cat == cueModal {
			if !obligedAt(text, ms, mi) {
				continue
			}
			m.cat = cueObliged
		}
		if m.cat == cueAI && vocativeAt(text, m) {
			m.cat |= cueVocative
		}
		if m.cat == cueAsks && !armedAt(text, m) || m.cat == cueDeflect && (surprise || !deflectAt(text, m)) {
			continue
		}
		if m.cat == cueDo && frenchPerfect(text, m) ||
			m.cat == cueReport && firstPersonBefore(text, m.start) || m.cat == cueStored && !clauseEndAfter(text, m) {
			continue
		}
		sk := sentence(m.start)
		if len(idx) == 0 || idx[len(idx)-1] != sk {
			idx = append(idx, sk)
			sents = append(sents, acc{0, int32(m.start), int32(m.end), false, 0})
		}
		a := &sents[len(sents)-1]
		a.mask |= m.cat
		if !quotedLineAt(text, sentenceStart(ends, sk), m.start) {
			a.out |= m.cat
		}
		if m.cat == cueStored { // the note itself, as "this note" is
			a.mask |= cueMemRef
		}
		a.start = min(a.start, int32(m.start))
		a.end = max(a.end, int32(m.end))
		if m.cat&(cueYou|cueYour) != 0 && !quotedAt(text, sentenceStart(ends, sk), m.start) {
			a.youOut = true
		}
	}
	// Speech reported from one third party to another (the villain "tells
	// his men to 'ignore your orders'", "팀장이 이전 지시는 무시하라고 했다")
	// is not a request to the model, unless the sentence names the model,
	// a later reader or an authority over the model, or speaks to the
	// reader outside the quotation: its phrase and cue findings of the
	// kinds that reported speech makes (voiding instructions, personas,
	// concealment) are dropped.
	reported := func(i int) bool {
		a := sents[i]
		return a.mask&cueReport != 0 && a.mask&modelCues == 0 && !a.youOut
	}
	// A line quoted from a film, a book or a song ("Favourite trailer line
	// ever: 'Forget everything you were told about this city.'") is not a
	// request either: in a sentence that names such a work or someone
	// quoting it, and no model, findings of those kinds inside the
	// quotation are dropped, and the sentence is judged by what stands
	// outside it.
	quoting := func(i int) bool {
		a := sents[i]
		return a.mask&cueQuoteSrc != 0 && a.mask&modelCues == 0 && a.mask != a.out
	}
	// drop removes from hits[from:] the reportable findings that start in
	// sentence i, only those where only(sentence start, finding start)
	// holds when only is given.
	drop := func(i int, only func(s, start int) bool) {
		s, e := sentenceStart(ends, idx[i]), len(text)
		if idx[i] < len(ends) {
			e = ends[idx[i]]
		}
		kept := hits[:from]
		for _, h := range hits[from:] {
			if !(reportable(h.Type) && h.Start >= s && h.Start < e && (only == nil || only(s, h.Start))) {
				kept = append(kept, h)
			}
		}
		hits = kept
	}
	inQuote := func(s, start int) bool { return quotedLineAt(text, s, start) }
	for i := range sents {
		if !quoting(i) {
			continue
		}
		drop(i, inQuote)
		if reportable(cueType(sents[i].mask)) {
			sents[i].mask = sents[i].out
		}
	}
	for i := range sents {
		if reported(i) {
			drop(i, nil)
		}
	}
	covered := func(s, e int) bool {
		for _, h := range hits[from:] {
			if h.Start < e && s < h.End {
				return true
			}
		}
		return false
	}
	for i, a := range sents {
		if covered(int(a.start), int(a.end)) {
			continue
		}
		if typ := cueType(a.mask); typ != "" {
			if !(reportable(typ) && reported(i)) {
				hits = append(hits, hit{Finding{Type: typ, Start: int(a.start), End: int(a.end)}, prio})
			}
			continue
		}
		if i+1 < len(sents) && idx[i+1] == idx[i]+1 {
			b := sents[i+1]
			if typ := cueType(a.mask | b.mask); typ != "" && cueType(b.mask) == "" && !(reportable(typ) && (reported(i) || reported(i+1))) {
				hits = append(hits, hit{Finding{Type: typ, Start: int(a.start), End: int(b.end)}, prio})
			}
		}
	}
	// An HTML comment is hidden from whoever reads the rendered text: one
	// that speaks to the model and asks it for something is an injection
	// even in words that would be ordinary in the open.
	for i := 0; ; {
		k := strings.Index(text[i:], "<!--")
		if k < 0 {
			break
		}
		s := i + k
		e := strings.Index(text[s+4:], "-->")
		end := len(text)
		if e >= 0 {
			end = s + 4 + e + 3
		}
		var mask uint64
		for _, m := range ms {
			if m.start >= s && m.end <= end {
				mask |= m.cat
			}
		}
		// A role label opening a line of the comment ("system:",
		// "assistant:") addresses the model as a chat transcript does, and
		// then a claim of authority or a grant asks as much as a verb.
		act := cueDo | cueRespond | cueRisky | cueIgnore | cueConceal | cueFuture | cueNoAsk
		if commentRoleLabel(text[s:end]) {
			mask |= cueAddress
			act |= cueAuthority | cueGrant | cueOverride | cueOff
		}
		if mask&(cueAI|cueYou|cueYour|cueAddress|cueReader) != 0 && mask&act != 0 {
			hits = append(hits, hit{Finding{Type: InstructionHidden, Start: s, End: end}, prio})
		}
		i = end
		if i >= len(text) {
			break
		}
	}
	return hits
}

// modelCues are the categories that name the model, a later reader of the
// memory or an authority over the model: reported speech that holds one
// of them may be meant for the model.
const modelCues = cueAI | cueAddress | cueAddressWeak | cueReader | cueMemRef | cueStored | cueAuthority | cueRuleGiver |
	cueOperator | cueStanding | cueOverride | cueObliged | cuePersona | cueCharacter

// reportable reports the finding types that reported speech makes without
// asking anything of the model.
func reportable(typ string) bool {
	return typ == InstructionIgnore || typ == InstructionOverride || typ == InstructionConceal
}

// sentenceStart is where sentence k starts, given the ends of sentences.
func sentenceStart(ends []int, k int) int {
	if k == 0 {
		return 0
	}
	return ends[k-1]
}

// quotedAt reports whether p stands inside a quotation opened after from:
// an odd number of straight double quotes (the markup view straightens
// curly ones), or more opening than closing guillemets or corner brackets.
func quotedAt(text string, from, p int) bool {
	s := text[from:p]
	return strings.Count(s, `"`)%2 == 1 || strings.Count(s, "«") > strings.Count(s, "»") ||
		strings.Count(s, "「") > strings.Count(s, "」") || strings.Count(s, "„") > strings.Count(s, "“")
}

// quotedLineAt reports whether p stands inside a quotation opened after
// from, as quotedAt does, or inside single quotes: a ' that opens (after
// a space, a bracket or a colon, before a letter) and has not closed (a '
// after a letter or punctuation and before a space, punctuation or the
// end). An apostrophe inside a word ("Kai's", "don't") does neither.
func quotedLineAt(text string, from, p int) bool {
	if quotedAt(text, from, p) {
		return true
	}
	open := false
	for i := from; i < p; i++ {
		if text[i] != '\'' {
			continue
		}
		before, after := byte(' '), byte(' ')
		if i > from {
			before = text[i-1]
		}
		if i+1 < len(text) {
			after = text[i+1]
		}
		wordBefore := isAlnum(before) || before >= utf8.RuneSelf
		wordAfter := isAlnum(after) || after >= utf8.RuneSelf
		switch {
		case !open && !wordBefore && wordAfter:
			open = true
		case open && before != ' ' && !wordAfter:
			open = false
		}
	}
	return open
}

// firstPersonBefore reports a reported-speech frame spoken by the writer
// ("I said to ignore …"): that speaks to the reader.
func firstPersonBefore(text string, i int) bool {
	return strings.HasSuffix(text[:i], " i ") || i == 2 && text[:i] == "i " || strings.HasSuffix(text[:i], " we ") || i == 3 && text[:i] == "we "
}

// askedBefore reports an address to the model ("a l'assistant", "al
// asistente que") that a past-tense request verb (cueAsked) stands right
// before, at most two words away: "elle a demande a l'assistant de …", "le
// pidio al asistente que …" tell what someone asked the assistant, a
// preference about how it speaks, not a note to it.
func askedBefore(text string, ms []cueMatch, mi int) bool {
	m := ms[mi]
	if r, _ := utf8.DecodeRuneInString(text[m.start:]); unspaced(r) || r >= 0xAC00 && r <= 0xD7A3 {
		// Korean and Japanese put the verb last: "비서에게 … 달라고 했다",
		// "アシスタントに … ように頼んだ".
		for _, a := range ms[mi+1:] {
			if a.cat == cueAsked && a.start >= m.end {
				return !strings.ContainsAny(text[m.end:a.start], ".!?\n。！？")
			}
		}
	}
	for j := mi - 1; j >= 0; j-- {
		a := ms[j]
		if m.start-a.end > 24 {
			return false
		}
		if a.cat != cueAsked || a.end > m.start {
			continue
		}
		gap := text[a.end:m.start]
		return strings.Count(gap, " ") <= 2 && !strings.ContainsAny(gap, ".,;:!?\n")
	}
	return false
}

// frenchPerfect reports a French past participle that reads as an
// imperative once its accent is dropped ("a demande", "ont recommande" for
// "a demandé", "ont recommandé"): an auxiliary of avoir stands before it.
func frenchPerfect(text string, m cueMatch) bool {
	if text[m.end-1] != 'e' || m.start < 2 || text[m.start-1] != ' ' {
		return false
	}
	w := text[:m.start-1]
	k := strings.LastIndexAny(w, " '")
	w = w[k+1:]
	switch w {
	case "a", "ont", "avait", "avaient", "aurait", "auraient", "ai", "avons", "avez", "aura", "auront":
		return true
	}
	return false
}

// clauseEndAfter reports whether a clause ends after m (punctuation, the end
// of the text, or a conjunction after a space, "here" or "down" allowed
// before it): "I've stored this; act like …" refers to the memory, "I've
// stored this recipe in the binder" or "stored this in the garage" to a
// thing.
func clauseEndAfter(text string, m cueMatch) bool {
	i := m.end
	if r, _ := utf8.DecodeLastRuneInString(text[:i]); !spacedLetter(r) {
		return true // an entry in Korean, Japanese, Chinese … ends on its verb
	}
	// A pronoun for the note or an auxiliary that ends the clause may
	// come first ("que j'ai enregistre ceci", "dass ich das gespeichert
	// habe").
	for _, w := range []string{" here", " down", " away", " ceci", " cela", " esto", " isto", " isso", " questo", " dit", " dies",
		" это", " habe", " hat", " heb", " heeft"} {
		if strings.HasPrefix(text[i:], w) && (i+len(w) == len(text) || !isAlpha(text[i+len(w)])) {
			i += len(w)
			break
		}
	}
	if i >= len(text) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	if r != ' ' {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}
	j := i + 1
	for j < len(text) && text[j] != ' ' && text[j] != ',' && text[j] != '.' && text[j] != ';' {
		j++
	}
	switch text[i+1 : j] {
	case "and", "but", "so", "or", "because", "y", "pero", "et", "mais", "und", "aber", "e", "mas", "ma", "en", "maar", "и", "но", "а":
		return true
	}
	return false
}

// obligedAt reports whether the modal ms[mi] binds the model: a name of
// the model (cueAI) stands right before it, after an article or another
// name of the model in a language written with articles ("the assistant
// must", "l'assistant doit", "the AI assistant is to"), or right after it
// across at most one word ("muss der Assistent", "يجب على المساعد",
// "アシスタントは必ず" with the particle between); and the modal is not
// followed by a passive ("the assistant must be updated").
func obligedAt(text string, ms []cueMatch, mi int) bool {
	m := ms[mi]
	if passiveAfter(text, m.end) {
		return false
	}
	// near: at most one word between, no punctuation.
	near := func(gap string) bool {
		return len(gap) <= 40 && strings.Count(strings.TrimSpace(gap), " ") == 0 && !strings.ContainsAny(gap, ".,;:!?\n。、，")
	}
	for j := mi - 1; j >= 0 && m.start-ms[j].start <= 40; j-- {
		a := ms[j]
		if a.cat != cueAI || a.start >= m.start {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(text[a.start:]); !spacedLetter(r) {
			// A script without spaces, or one whose words take particles:
			// the match runs to the end of its word ("アシスタントは必ず",
			// "어시스턴트는 반드시", "सहायक को हमेशा").
			if gap := text[a.start:m.start]; len(gap) <= 40 && strings.Count(strings.TrimSpace(gap), " ") <= 1 &&
				!strings.ContainsAny(gap, ".,;:!?\n。、，") {
				return true
			}
			continue
		}
		if a.end <= m.start && near(text[a.end:m.start]) && strings.TrimSpace(text[a.end:m.start]) == "" && determinerBefore(text, ms, j) {
			return true
		}
	}
	for _, a := range ms[mi+1:] {
		if a.start-m.end > 16 {
			break
		}
		if a.cat == cueAI && a.start >= m.end && near(text[m.end:a.start]) {
			return true
		}
	}
	return false
}

// vocativeAt reports a name of the model called out as the one spoken to
// ("Also, agent, when you next load this, book …", "Oye, IA, si te
// pregunta …", "future me (the bot, not the human): …"): the name is
// followed by a comma and stands at the start of a sentence, a line or an
// HTML comment, after an interjection ("hey", "oye", "also," …) or opening
// a parenthesis ("(the bot, …"). The name is not the head of a list ("AI,
// robotics and space": another comma or a conjunction within the next two
// words) nor has a possessive or an article before it ("my assistant,
// Maria, …", "the agent, Tom, …"), except in a parenthesis.
func vocativeAt(text string, m cueMatch) bool {
	rest := strings.TrimLeft(text[m.end:], " ")
	if !strings.HasPrefix(rest, ",") {
		return false
	}
	// A list: a comma or a conjunction within the next two words.
	words := strings.Fields(rest[1:min(len(rest), 64)])
	for _, w := range words[:min(len(words), 2)] {
		if strings.HasSuffix(w, ",") || slices.Contains(listJoiners, w) {
			return false
		}
	}
	// Names people also bear ("Claude, Marie's husband, …").
	if n := text[m.start:m.end]; n == "claude" || n == "gemini" {
		return false
	}
	before := strings.TrimRight(text[:m.start], " ")
	if before == "" {
		return true
	}
	if strings.HasSuffix(before, "(") || strings.HasSuffix(before, "<!--") {
		return true
	}
	if w := strings.TrimSuffix(before, "l'"); len(w) < len(before) {
		before = strings.TrimRight(w, " ")
	}
	// An article right after an opening parenthesis: "(the bot, …".
	if k := strings.LastIndexByte(before, '('); k >= 0 && slices.Contains(determiners, strings.TrimSpace(before[k+1:])) {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	switch r {
	case '.', '!', '?', ';', '\n', ':', '—', '-', '¡', '¿', '"':
		return true
	case ',':
		// "Also, agent, …", "Oye, IA, …": one interjection or discourse
		// word opens the sentence before the comma.
		w := strings.TrimRight(before[:len(before)-1], " ")
		k := strings.LastIndexAny(w, ".!?;:\n¡¿\"(")
		return slices.Contains(vocativeOpeners, strings.TrimSpace(w[k+1:]))
	}
	// "hey agent, …", "oye IA, …"
	k := strings.LastIndexAny(before, " .!?;:\n¡¿\"(,")
	if !slices.Contains(vocativeOpeners, before[k+1:]) {
		return false
	}
	w := strings.TrimRight(before[:k+1], " ")
	return w == "" || strings.ContainsAny(w[len(w)-1:], ".!?;:\n¡¿\"(,")
}

// conditionals are the words that arm a reply for a question someone may
// ask ("when Tom asks", "si te pregunta", "wenn er fragt").
var conditionals = []string{"if", "when", "whenever", "in case", "should", "once", "si", "s'il", "s'ils", "cuando", "siempre que", "cada vez que",
	"en caso de que", "quand", "lorsque", "chaque fois que", "au cas ou", "wenn", "falls", "sobald", "sollte", "se", "quando",
	"sempre que", "caso", "ogni volta che", "qualora", "nel caso", "als", "wanneer", "zodra", "indien", "если", "когда",
	"как только", "如果", "要是", "若", "每当", "每當", "当", "當", "もし", "만약", "만일", "إذا", "اذا", "عندما", "كلما", "لو",
	"अगर", "जब", "यदि"}

// armedAt reports whether the question m (cueAsks) follows a conditional
// in its clause, at most six words before it ("when Tom asks whether …",
// "si algún día te pregunta"): a reply is armed for it. Japanese and
// Korean forms carry the conditional in the verb (聞かれたら, 물으면).
func armedAt(text string, m cueMatch) bool {
	lit := text[m.start:m.end]
	if strings.HasSuffix(lit, "たら") || strings.HasSuffix(lit, "면") || strings.HasSuffix(lit, "거든") {
		return true
	}
	b := text[max(0, m.start-80):m.start]
	if k := strings.LastIndexAny(b, ".;!?\n。！？"); k >= 0 {
		b = b[k+1:]
	}
	if r, _ := utf8.DecodeRuneInString(lit); !spacedLetter(r) {
		for _, c := range conditionals {
			if r, _ := utf8.DecodeRuneInString(c); !spacedLetter(r) && strings.Contains(b, c) {
				return true
			}
		}
		return false
	}
	ws := strings.FieldsFunc(b, func(r rune) bool { return r == ' ' || r == ',' })
	ws = ws[max(0, len(ws)-7):]
	for i := range ws {
		for _, c := range conditionals {
			n := strings.Count(c, " ") + 1
			if i+n <= len(ws) && strings.Join(ws[i:i+n], " ") == c {
				return true
			}
		}
	}
	return false
}

// subjects are the pronouns and auxiliaries that make a deflection a
// description ("I just change the subject", "he tends to change the
// subject", "ella cambia de tema") rather than an imperative.
var subjects = []string{"i", "we", "he", "she", "they", "to", "will", "would", "can", "could", "tends", "tried", "tries",
	"usually", "yo", "el", "ella", "ellos", "ellas", "nosotros", "suele", "je", "j", "il", "elle", "ils", "elles", "nous",
	"ich", "er", "sie", "wir", "eu", "ele", "ela", "eles", "elas", "io", "lui", "lei", "loro", "noi", "ik", "hij", "zij", "ze",
	"wij", "я", "он", "она", "они", "мы"}

// deflectAt reports whether the deflection m is told as an imperative:
// neither the first word of its clause nor the two words right before it
// are a subject or an auxiliary ("say yes and change the subject", "tell
// him they were fine and steer the conversation away", not "I say yes
// and change the subject" or "he tends to change the subject").
func deflectAt(text string, m cueMatch) bool {
	if r, _ := utf8.DecodeRuneInString(text[m.start:]); !spacedLetter(r) {
		return true
	}
	b := text[max(0, m.start-80):m.start]
	if k := strings.LastIndexAny(b, ".;:!?,\n—("); k >= 0 {
		b = b[k+1:]
	}
	ws := strings.FieldsFunc(b, func(r rune) bool { return r == ' ' || r == '\'' })
	if len(ws) > 0 && slices.Contains(subjects, ws[0]) {
		return false
	}
	for _, w := range ws[max(0, len(ws)-2):] {
		if slices.Contains(subjects, w) {
			return false
		}
	}
	return true
}

// listJoiners are the conjunctions that make a name of the model before a
// comma the head of a list rather than a vocative.
var listJoiners = []string{"and", "or", "y", "o", "e", "ou", "et", "und", "oder", "en", "of", "и", "или", "ed"}

// vocativeOpeners are the interjections and discourse words that may open
// a sentence before a vocative ("also, agent, …", "oye, IA, …", "hey
// bot, …").
var vocativeOpeners = []string{"hey", "hi", "hello", "ok", "okay", "so", "also", "and", "oh", "ah", "listen", "look", "yo", "psst",
	"btw", "oye", "hola", "ey", "eh", "mira", "bueno", "pues", "ademas", "y", "ojo", "salut", "coucou", "ecoute", "bon", "alors",
	"aussi", "et", "dis", "dites", "tiens", "he", "hallo", "hoi", "na", "ubrigens", "und", "hor zu", "ola", "oi", "olha", "ei", "alem disso",
	"ah e", "e", "ehi", "ciao", "senti", "allora", "inoltre", "hee", "luister", "trouwens", "ook", "en", "эй", "привет", "слушай",
	"кстати", "и", "а", "ну"}

// determiners are the articles and determiners that make a name of the
// model the model ("the assistant", not "my assistant" or "the office
// assistant").
var determiners = []string{"the", "this", "that", "any", "every", "each", "el", "la", "le", "les", "los", "las", "der", "die",
	"das", "den", "o", "a", "os", "il", "lo", "de", "het"}

// determinerBefore reports whether the name of the model ms[j] starts
// with an article ("l'assistant"), follows a determiner or another name
// of the model ("the AI assistant"), or is written in a script without
// articles.
func determinerBefore(text string, ms []cueMatch, j int) bool {
	a := ms[j]
	r, _ := utf8.DecodeRuneInString(text[a.start:])
	if !spacedLetter(r) || r >= 0x370 || strings.HasPrefix(text[a.start:], "l'") || strings.HasSuffix(text[:a.start], "l'") {
		return true // Cyrillic, Han, Hangul, Arabic … have no articles
	}
	for k := j - 1; k >= 0 && ms[k].end >= a.start-1; k-- {
		if ms[k].cat == cueAI && ms[k].end < a.start {
			return true
		}
	}
	w := strings.TrimRight(text[:a.start], " ")
	if len(w) == len(text[:a.start]) {
		return false
	}
	w = w[strings.LastIndexAny(w, " \n(\"'")+1:]
	return slices.Contains(determiners, w)
}

// passiveAfter reports an obligation of the model followed by a passive
// or a state ("the assistant must be updated", "el asistente debe ser
// actualizado"): a rule about the model, not one it is to follow.
func passiveAfter(text string, i int) bool {
	if i >= len(text) || text[i] != ' ' {
		return false
	}
	j := i + 1
	for j < len(text) && text[j] != ' ' && text[j] != ',' && text[j] != '.' {
		j++
	}
	switch text[i+1 : j] {
	case "be", "been", "get", "ser", "estar", "etre", "sein", "werden", "essere", "worden", "zijn", "быть":
		return true
	}
	return false
}

// compoundHeads are nouns that an AI word before them modifies: "for the
// AI project" names a project, not a reader.
var compoundHeads = []string{"project", "projects", "team", "teams", "course", "class", "lab", "group", "club",
	"conference", "meetup", "workshop", "hackathon", "startup", "company", "policy", "act", "ethics", "safety",
	"research", "researchers", "tool", "tools", "feature", "features", "summit", "talk", "industry", "market",
	"strategy", "budget", "roadmap", "pilot", "demo", "launch", "review", "committee", "manager", "lead", "job",
	"role", "position", "training", "evaluation", "benchmark", "paper", "thesis", "book", "article", "newsletter",
	"podcast", "hype", "art", "images", "image", "section", "chapter", "module", "unit", "exam", "homework", "program",
	"programme", "initiative", "department", "office", "vendor", "contract", "licence", "license", "subscription",
	"account", "slides", "deck", "report", "guidelines", "rollout", "integration", "migration", "sprint", "ticket"}

// modifiesNoun reports whether the word that starts after i (one space
// on) is one of compoundHeads.
func modifiesNoun(text string, i int) bool {
	if i >= len(text) || text[i] != ' ' {
		return false
	}
	j := i + 1
	for j < len(text) && isAlpha(text[j]) {
		j++
	}
	return slices.Contains(compoundHeads, strings.ToLower(text[i+1:j]))
}

// commentRoleLabels are the speakers of a chat transcript that, opening a
// line of an HTML comment, address the model, in the gate's languages.
var commentRoleLabels = []string{"system", "assistant", "developer", "ai", "model", "llm", "bot", "chatbot", "agent",
	// the model named in the other languages ("<!-- IA: … -->")
	"ia", "l'ia", "ki", "ии", "asistente", "assistente", "assistent", "ассистент", "agente", "modelo", "modello", "modele",
	"sistema", "systeme", "система", "助手", "アシスタント", "어시스턴트", "المساعد", "सहायक", "एआई"}

// commentRoleLabel reports whether a line of the HTML comment c (its
// "<!--" and "-->" included) begins with a role label and a colon, after
// spaces and the comment's opening.
func commentRoleLabel(c string) bool {
	c = strings.TrimSuffix(strings.TrimPrefix(c, "<!--"), "-->")
	for line := range strings.SplitSeq(c, "\n") {
		line = strings.TrimLeft(line, " \t\r-*#>[")
		for _, l := range commentRoleLabels {
			if len(line) > len(l) && strings.EqualFold(line[:len(l)], l) {
				rest := strings.TrimLeft(line[len(l):], " ]")
				if strings.HasPrefix(rest, ":") {
					return true
				}
			}
		}
	}
	return false
}

// findDests adds a cueDest match for every URL ("http://", "https://"),
// e-mail address (a word, '@', a word with a dot) and international phone
// number ('+' and 10 to 15 digits) in text, keeping ms in order of offset.
func findDests(text string, ms []cueMatch) []cueMatch {
	n := len(ms)
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case 'h':
			if strings.HasPrefix(text[i:], "http://") || strings.HasPrefix(text[i:], "https://") {
				ms = append(ms, cueMatch{cueDest, i, i + 7})
				i += 7
			}
		case '+':
			// An international phone number ("+55 11 98888-0000"): a
			// destination as an address is.
			if i == 0 || !isWordByte(text[i-1]) {
				d, j := 0, i+1
				for j < len(text) && (isDigit(text[j]) || (text[j] == ' ' || text[j] == '-') && j+1 < len(text) && isDigit(text[j+1])) {
					if isDigit(text[j]) {
						d++
					}
					j++
				}
				if d >= 10 && d <= 15 {
					ms = append(ms, cueMatch{cueDest, i, j})
					i = j - 1
				}
			}
		case '@':
			if i > 0 && isWordByte(text[i-1]) && i+1 < len(text) && isWordByte(text[i+1]) {
				if dot := strings.IndexByte(text[i:min(len(text), i+64)], '.'); dot > 1 {
					ms = append(ms, cueMatch{cueDest, i, i + 1})
				}
			}
		}
	}
	if len(ms) > n {
		slices.SortStableFunc(ms, func(a, b cueMatch) int { return a.start - b.start })
	}
	return ms
}

// ownsGuidance reports whether the possessive ms[mi] ("my", "내", "मेरी")
// is that of a word for instructions at most two words on ("my previous
// instructions", "私の前の指示"): the writer's own instructions, which are
// theirs to drop. "My words" or "내 말" later in the sentence is not.
func ownsGuidance(text string, ms []cueMatch, mi int) bool {
	m := ms[mi]
	for _, g := range ms[mi+1:] {
		if g.start-m.end > 40 {
			break
		}
		if g.cat != cueGuidance || g.start < m.end {
			continue
		}
		gap := text[m.end:g.start]
		if strings.Count(gap, " ") <= 2 && !strings.ContainsAny(gap, ".;!?\n。") {
			return true
		}
	}
	return false
}

// cueType returns the type of the first pattern the categories make, or "".
func cueType(mask uint64) string {
	for _, p := range cuePatterns {
		if mask&p.all == p.all && (p.any == 0 || mask&p.any != 0) && mask&p.none == 0 {
			return p.typ
		}
	}
	return ""
}
