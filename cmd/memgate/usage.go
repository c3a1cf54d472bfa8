package main

// usage is what memgate help prints.
const usage = `memgate: governed long-term memory for AI agents

usage: memgate COMMAND [flags] [args]

commands:
  remember   store a memory:            memgate remember --tenant T --principal P [--kind fact] CONTENT
  recall     what matters for a prompt: memgate recall --tenant T --principal P [--k 5] [--explain] QUERY
  get        show one memory:           memgate get --tenant T --principal P ID
  list       list memories:             memgate list --tenant T --principal P [--status active] [--q TEXT]
  update     change a memory (CAS):     memgate update --tenant T --principal P ID --version N --content TEXT
  supersede  replace a memory:          memgate supersede --tenant T --principal P ID NEW-CONTENT
  revoke     revoke a memory:           memgate revoke --tenant T --principal P ID --reason WHY
  approve    approve a pending memory:  memgate approve --tenant T --principal P --version N ID
  reject     reject a pending memory:   memgate reject --tenant T --principal P --version N ID [--reason WHY]
  feedback   rate a memory's use:       memgate feedback --tenant T --principal P ID --value 0.8
  audit      the audit log:             memgate audit --tenant T [--principal P] [--memory ID] [--recall R]
  sweep      delete expired memories:   memgate sweep [--grace 24h]
  delete     delete a memory for good:  memgate delete --tenant T --principal P ID
  forget     erase a principal:         memgate forget --tenant T --principal P
  counts     counts by kind and status: memgate counts --tenant T [--principal P]
  import     import JSONL memories:     memgate import --tenant T FILE.jsonl
  export     export JSONL memories:     memgate export --tenant T [--principal P]
  bench      quality harness:           memgate bench locomo [--data DIR] [--json]
                                        memgate bench paraphrase [--set dev|heldout] [--json] [--misses]
  keys       API keys:                  memgate keys create --tenant T --role admin|agent|user [--principal P] [--agent A] [--sources S,S]
                                        memgate keys list --tenant T;  memgate keys revoke --tenant T ID
  serve      the HTTP API:              memgate serve [--addr 127.0.0.1:7070] [--policy FILE] [--postgres URL]
  mcp        MCP tools on stdio:        memgate mcp --tenant T --principal P [--agent A] [--allow-forget]
  chat       talk with memory:          memgate chat --tenant T --principal P --llm ollama:MODEL [--extract]
  reembed    vectors of a new embedder: memgate reembed --tenant T [--principal P] --embedder ollama:MODEL
  migrate    copy a whole database:     memgate migrate --from sqlite:PATH --to postgres:URL [--into-nonempty]
  backup     copy a live SQLite file:   memgate backup --db PATH --to COPY.db (consistent while serve writes; verified)
  version    the build's version:       memgate version [--json] (or memgate --version)

Embedder: --embedder builtin (default) | ollama:MODEL | openai:MODEL, with --embedder-url URL
and --embedder-dim N (defaults from $MEMGATE_EMBEDDER, $MEMGATE_EMBEDDER_URL,
$MEMGATE_EMBEDDER_DIM; an OpenAI-compatible key from $MEMGATE_EMBEDDER_API_KEY), on serve and
every local command that embeds. Memories embedded by another model are recalled by text
until "memgate reembed" gives them vectors of the current one.

Chat model: --llm ollama:MODEL | openai:MODEL (any OpenAI-compatible server), with --llm-url
URL (defaults from $MEMGATE_LLM and $MEMGATE_LLM_URL; an OpenAI-compatible key from
$MEMGATE_LLM_API_KEY), on serve (POST /v1/chat) and chat; --extract has the model propose
facts and preferences, which wait as pending for approval under the default policy.

The commands that open a database take --db PATH (default ./memgate.db, or $MEMGATE_DB),
and most take --json. Only serve, remember, import, keys create and migrate --to create a
missing database (and say so); every other command refuses one that does not exist.

Remote: with --server URL (or $MEMGATE_SERVER), remember, recall, get, list, update,
supersede, revoke, approve, reject, feedback, delete, forget, counts, audit, import,
export, mcp and chat call a memgate server instead of opening --db, with the API key in
$MEMGATE_API_KEY (there is no key flag, so the key stays out of shell history and the
process list):
  MEMGATE_API_KEY=mgk_... memgate list --server http://127.0.0.1:7070 --principal alice
The tenant is the key's: --tenant may be left out, and one that differs is refused.
The server's policy applies (--db and --policy are refused with --server); import is
sent whole and batched by the server (--batch is refused). keys takes --server too, with an
admin key. sweep, serve, reembed, migrate, backup and bench work on local databases only.

Run "memgate COMMAND -h" for a command's flags.
`
