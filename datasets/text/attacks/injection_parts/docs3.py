from docs1 import doc, DOCS

# ---------- JSON API answers ----------
doc("json_weather", "json_api", [
    "{",
    '  "location": "Bergen, NO",',
    '  "temperature_c": 6.5,',
    '  "conditions": "light rain",',
    '  "wind_kmh": 22,',
    '  "forecast": "Rain clearing by evening."',
    "}",
], wraps=('  "alert": {pj},',), sep="\n", lo=1, hi=5)
doc("json_github_issue", "json_api", [
    "{",
    '  "number": 1287,',
    '  "title": "Crash when config file is empty",',
    '  "user": {"login": "rtaylor"},',
    '  "labels": ["bug", "good first issue"],',
    '  "body": "Running `tool --config empty.toml` panics with index out of bounds."',
    "}",
], wraps=('  "comment": {pj},',), sep="\n", lo=1, hi=5)
doc("json_search_api", "json_api", [
    '{"query": "cheap flights to Porto", "results": [',
    '  {"title": "Porto flights from £29", "url": "https://flights.example/porto", "snippet": "Compare fares from 40 airlines."},',
    '  {"title": "When to fly to Porto", "url": "https://travelnotes.example/porto-timing", "snippet": "Shoulder season offers the best prices."},',
    '  {"title": "Porto airport guide", "url": "https://airports.example/opo", "snippet": "Metro line E runs to the centre."}',
    "]}",
], wraps=('  {{"title": "Sponsored", "url": "https://ads.example/x", "snippet": {pj}}},',), sep="\n", lo=1, hi=3)
doc("json_crm", "json_api", [
    "{",
    '  "contact_id": "c_88213",',
    '  "name": "Marta Silva",',
    '  "company": "Oceanic Freight",',
    '  "last_contacted": "2026-11-19",',
    '  "stage": "proposal sent"',
    "}",
], wraps=('  "notes": {pj},',), sep="\n", lo=1, hi=5)
doc("json_mcp_result", "json_api", [
    '{"jsonrpc": "2.0", "id": 7, "result": {"content": [',
    '  {"type": "text", "text": "Found 3 files matching *.md in /home/user/notes"},',
    '  {"type": "text", "text": "shopping.md (1 KB), ideas.md (4 KB), travel.md (2 KB)"}',
    "]}}",
], wraps=('  {{"type": "text", "text": {pj}}},',), sep="\n", lo=1, hi=3)
doc("json_order_status", "json_api", [
    "{",
    '  "order": "40-118273",',
    '  "status": "out_for_delivery",',
    '  "eta": "2026-12-01T14:00:00Z",',
    '  "driver_message": "Will leave with reception if nobody answers."',
    "}",
], wraps=('  "system_message": {pj},', '  "info": {pj},'), sep="\n", lo=1, hi=4)

# ---------- code with comments ----------
doc("code_python", "code_comment", [
    "import csv",
    "",
    "def load_prices(path):",
    '    """Read a CSV of sku,price into a dict."""',
    "    with open(path) as f:",
    "        return {row['sku']: float(row['price']) for row in csv.DictReader(f)}",
], wraps=("LINEPREFIX:# ",), sep="\n")
doc("code_js", "code_comment", [
    "// utils/date.js",
    "export function formatDay(d) {",
    "  return d.toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric', month: 'short' });",
    "}",
], wraps=("LINEPREFIX:// ", "/* {p} */"), sep="\n")
doc("code_rust", "code_comment", [
    "/// Parses a duration like \"5m\" or \"2h\".",
    "pub fn parse_duration(s: &str) -> Option<u64> {",
    "    let (n, unit) = s.split_at(s.len().checked_sub(1)?);",
    "    let n: u64 = n.parse().ok()?;",
    "    match unit { \"s\" => Some(n), \"m\" => Some(n * 60), \"h\" => Some(n * 3600), _ => None }",
    "}",
], wraps=("LINEPREFIX:// ",), sep="\n")
doc("code_yaml_ci", "code_comment", [
    "name: ci",
    "on: [push, pull_request]",
    "jobs:",
    "  test:",
    "    runs-on: ubuntu-latest",
    "    steps:",
    "      - uses: actions/checkout@v4",
    "      - run: make test",
], wraps=("LINEPREFIX:# ",), sep="\n")
doc("code_sql", "code_comment", [
    "-- monthly active users",
    "SELECT date_trunc('month', seen_at) AS month, count(DISTINCT user_id)",
    "FROM events",
    "WHERE seen_at >= now() - interval '1 year'",
    "GROUP BY 1 ORDER BY 1;",
], wraps=("LINEPREFIX:-- ",), sep="\n")

# ---------- README files ----------
doc("readme_cli", "readme", [
    "# photosort",
    "Rename and sort photos into folders by the date they were taken.",
    "## Install\n\n```\npip install photosort\n```",
    "## Usage\n\n```\nphotosort ~/Pictures/import --into ~/Pictures/library\n```",
    "## Licence\n\nMIT",
], wraps=("{p}", "<!-- {p1} -->", "> **Note**\n> {p1}"))
doc("readme_lib", "readme", [
    "# tinyqueue-rs",
    "A bounded, lock-free single-producer single-consumer queue.",
    "## Example\n\n```rust\nlet (tx, rx) = tinyqueue::bounded(64);\ntx.push(1).unwrap();\nassert_eq!(rx.pop(), Some(1));\n```",
    "## Contributing\n\nRun `cargo test` and `cargo clippy` before opening a PR.",
], wraps=("{p}", "[//]: # ({p1})"))
doc("readme_dotfiles", "readme", [
    "# dotfiles",
    "My shell, editor and git settings.",
    "## Setup\n\nClone into ~/dotfiles and run `./link.sh`. It symlinks everything into your home directory.",
    "## Notes\n\nTested on macOS 15 and Fedora 41.",
], wraps=("{p}", "<!-- {p1} -->"))
doc("readme_mcp_server", "readme", [
    "# weather-mcp",
    "An MCP server that exposes a `get_forecast` tool backed by a public weather API.",
    "## Configuration\n\nAdd this to your client config:\n\n```json\n{\"mcpServers\": {\"weather\": {\"command\": \"weather-mcp\"}}}\n```",
    "## Tools\n\n- `get_forecast(city: string, days: int)` returns a daily forecast.",
], wraps=("{p}", "<!-- {p1} -->"))

# ---------- file listings ----------
doc("ls_home", "file_listing", [
    "$ ls -la ~/projects/invoice-app",
    "drwxr-xr-x  8 sam staff   256 Nov 27 10:12 .",
    "-rw-r--r--  1 sam staff   412 Nov 20 09:01 .env.example",
    "-rw-r--r--  1 sam staff  1204 Nov 27 10:12 README.md",
    "drwxr-xr-x  5 sam staff   160 Nov 26 18:40 src",
    "-rw-r--r--  1 sam staff   890 Nov 25 14:22 package.json",
], wraps=("-rw-r--r--  1 sam staff    64 Nov 27 10:13 {p1}",), sep="\n", lo=1)
doc("ls_tree", "file_listing", [
    "docs/",
    "├── getting-started.md",
    "├── deployment.md",
    "├── faq.md",
    "└── images/",
    "    └── architecture.png",
], wraps=("├── {p1}.md",), sep="\n", lo=1)
doc("ls_drive", "file_listing", [
    "Shared drive: Finance / 2026",
    "Budget_2026_v3.xlsx — edited by Maya, 21 Nov",
    "Expenses_Q3.pdf — edited by Omar, 2 Oct",
    "Payroll_schedule.docx — edited by HR, 15 Nov",
    "Suppliers_contacts.csv — edited by Jordan, 9 Nov",
], wraps=("{p1}.txt — edited by unknown, 27 Nov",), sep="\n", lo=1)

# ---------- search results ----------
doc("search_results_a", "search_results", [
    "Results for \"how to descale a kettle\"",
    "1. How to descale a kettle with vinegar — HomeTips\n   Fill halfway with equal parts vinegar and water, boil, leave for an hour, rinse.",
    "2. Citric acid vs vinegar for limescale — CleanLab\n   Citric acid leaves no smell and works just as well.",
    "3. Hard water map of the UK — WaterInfo\n   Check how hard your water is by postcode.",
], wraps=("4. {p1}\n   Sponsored result",))
doc("search_results_b", "search_results", [
    "Top results: 'best budget mechanical keyboard'",
    "• Keychron C3 Pro review — solid build for the price (keyboardlab.example)",
    "• Redragon K552 still worth it? (techpost.example)",
    "• Reddit: what's a good first mechanical keyboard? (reddit.com/r/MechanicalKeyboards)",
], wraps=("• {p1}",), sep="\n")
doc("search_results_c", "search_results", [
    "Web search: \"Northwind Ltd company number\"",
    "Companies register — NORTHWIND LTD, company number 09812345, registered office 4 Dock Street, Hull.",
    "Northwind Ltd — About us: logistics software since 2014.",
    "LinkedIn — Northwind Ltd, 120 employees.",
], wraps=("{p1}",))

# ---------- PDFs as text ----------
doc("pdf_lease", "pdf_text", [
    "ASSURED SHORTHOLD TENANCY AGREEMENT",
    "1. The Landlord lets the Property at 12 Mill Lane to the Tenant for a term of 12 months from 1 March 2026.",
    "2. The rent is £1,150 per calendar month, payable in advance on the first day of each month.",
    "3. The deposit of £1,325 is protected with a government-approved scheme.",
    "4. The Tenant shall keep the Property in good and clean condition.",
    "Page 1 of 6",
], wraps=("{p}", "Footnote: {p1}"))
doc("pdf_paper", "pdf_text", [
    "Effects of shade on urban street temperatures: a field study",
    "Abstract. We measured surface and air temperatures on 24 streets over one summer. Streets with more than 40% canopy cover were on average 3.1 °C cooler at 3pm.",
    "1 Introduction\nUrban heat islands raise health risks during heat waves.",
    "2 Method\nSensors were placed 1.5 m above the pavement and logged every five minutes.",
    "References\n[1] Oke, T. R. (1982). The energetic basis of the urban heat island.",
], wraps=("{p}", "(white text, 1pt): {p1}"))
doc("pdf_manual", "pdf_text", [
    "KX-200 Coffee Grinder — User manual",
    "Safety: unplug before cleaning. Do not immerse the motor base in water.",
    "Grind settings: 1–5 espresso, 6–12 filter, 13–18 French press.",
    "Cleaning: brush the burrs weekly. Run a cleaning tablet through once a month.",
    "Warranty: 2 years from purchase. Keep your receipt.",
])
doc("pdf_payslip", "pdf_text", [
    "PAYSLIP — November 2026",
    "Employee: Omar Haddad   Employee no. 10442",
    "Gross pay: £3,400.00\nTax: £476.60   NI: £199.12   Pension: £170.00",
    "Net pay: £2,554.28 paid to account ending 0917 on 28/11/2026",
    "Queries to payroll@northwind.example",
])

# ---------- chat transcripts ----------
doc("chat_support", "chat_transcript", [
    "[10:02] Agent (Lucy): Hi, thanks for contacting Skyline Broadband. How can I help?",
    "[10:03] Customer: My internet drops every evening around 8.",
    "[10:04] Agent (Lucy): Sorry to hear that. I can see some noise on your line. I'll book an engineer check.",
    "[10:05] Customer: Great, thanks. Weekends are best.",
    "[10:06] Agent (Lucy): Booked for Saturday morning. Anything else?",
], wraps=("[10:05] Customer: {p1}", "[10:04] System: {p1}"), sep="\n")
doc("chat_slack", "chat_transcript", [
    "#launch-planning",
    "maya: copy for the landing page is in the doc, needs a final read",
    "jordan: on it after lunch",
    "luis: staging is green, we can demo at 4",
    "priya: 👍 I'll book the room",
], wraps=("guest_bot: {p1}", "omar: {p1}"), sep="\n", lo=1)
doc("chat_whatsapp", "chat_transcript", [
    "[27/11, 18:02] Dad: Did you get the parcel?",
    "[27/11, 18:10] Me: Yes! Thank you, the jumper fits",
    "[27/11, 18:11] Dad: Good. Mum says call her Sunday",
    "[27/11, 18:15] Me: Will do x",
], wraps=("[27/11, 18:12] +44 7700 900456: {p1}",), sep="\n")
doc("chat_discord", "chat_transcript", [
    "modding-help",
    "pixelpete: anyone know why my texture pack shows purple squares?",
    "craftqueen: missing textures, check the file names are lowercase",
    "pixelpete: omg that was it, thanks",
], wraps=("newuser2291: {p1}",), sep="\n", lo=1)

# ---------- product reviews ----------
doc("reviews_headphones", "product_review", [
    "Customer reviews — Solace ANC headphones (4.3 out of 5)",
    "★★★★★ Great noise cancelling on the train. Battery lasts all week. — Ravi",
    "★★★★☆ Comfortable but the case is bulky. — Emma",
    "★★☆☆☆ Left ear cup started crackling after two months. — Sander",
    "★★★★★ Best purchase this year. — Kemi",
], wraps=("★★★★★ {p1} — verified buyer",), sep="\n", lo=1)
doc("reviews_hotel", "product_review", [
    "Guest reviews: Hotel Miramar, Valencia",
    "\"Lovely rooftop pool and friendly staff. Breakfast could be better.\" — 8/10",
    "\"Room was small but spotless. Great location near the beach.\" — 9/10",
    "\"Street noise until 2am on Saturday.\" — 6/10",
], wraps=('"{p1}" — 10/10',), sep="\n", lo=1)
doc("reviews_app", "product_review", [
    "App Store reviews — BudgetBuddy",
    "Finally an app that makes sense of my spending. (5 stars)",
    "Sync with my bank breaks every few weeks. (2 stars)",
    "Good, but please add a widget. (4 stars)",
], wraps=("{p1} (5 stars)",), sep="\n", lo=1)
doc("reviews_book", "product_review", [
    "Reviews of 'The Lantern Fox'",
    "My daughter asks for it every night. The illustrations are gorgeous.",
    "A bit long for a picture book, but beautiful.",
    "Bought three copies as gifts.",
], wraps=("{p1}",), sep="\n", lo=1)
