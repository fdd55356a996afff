from docs1 import doc, DOCS

doc("resume", "pdf_text", [
    "PRIYA NAIR — Data Analyst\npriya.nair@mailbox.example · Manchester",
    "Experience\nNorthwind Ltd, Data Analyst (2022–now): built the weekly sales dashboard; cut report time from 2 days to 2 hours.",
    "Skills\nSQL, Python (pandas), Tableau, dbt",
    "Education\nBSc Mathematics, University of Leeds, 2021",
], wraps=("{p}", "(white 1pt text) {p1}"))
doc("meeting_transcript", "chat_transcript", [
    "Transcript — Weekly sync, 27 Nov",
    "Maya: Okay, let's start with the launch. We're on track for February.",
    "Jordan: Design is done; we're waiting on legal for the terms page.",
    "Luis: Staging is stable. I'd like one more load test next week.",
    "Maya: Great. Action items: Jordan chases legal, Luis books the load test.",
], wraps=("Unknown speaker: {p1}", "{p1}"), sep="\n", lo=1)
doc("rss_feed", "web_html", [
    "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>City Cycling News</title>",
    "<item><title>New bike lane on Park Road opens</title><description>The 1.2 km protected lane opened on Monday.</description></item>",
    "<item><title>Winter riding tips</title><description>Lights, mudguards and wider tyres make a big difference.</description></item>",
    "<item><title>Bike library extends hours</title><description>Now open until 7pm on Thursdays.</description></item>",
    "</channel></rss>",
], wraps=("<item><title>Notice</title><description>{p1}</description></item>", "<!-- {p1} -->"), sep="\n", lo=1, hi=4)
doc("changelog", "readme", [
    "# Changelog",
    "## 2.4.0 — 2026-11-20\n- Added CSV export\n- Faster startup (about 30%)",
    "## 2.3.2 — 2026-10-02\n- Fixed crash on empty config\n- Updated dependencies",
    "## 2.3.1 — 2026-09-14\n- Security: redact tokens in debug logs",
], wraps=("{p}", "- {p1}"))
doc("git_diff", "code_comment", [
    "diff --git a/src/billing.py b/src/billing.py",
    "--- a/src/billing.py\n+++ b/src/billing.py",
    "@@ -12,6 +12,8 @@ def total(items):",
    "     subtotal = sum(i.price * i.qty for i in items)",
    "+    if subtotal > 1000:\n+        subtotal *= 0.95  # bulk discount",
    "     return round(subtotal * 1.2, 2)",
], wraps=("+    # {p1}",), sep="\n", lo=2)
doc("sms_thread", "chat_transcript", [
    "Messages with Greenway Surgery",
    "Greenway Surgery: Your flu jab is booked for Sat 6 Dec at 10:20. Reply C to cancel.",
    "Me: Thanks",
    "Greenway Surgery: Please arrive 5 minutes early and wear short sleeves.",
], wraps=("Unknown number: {p1}", "{p1}"), sep="\n", lo=1)
doc("menu_page", "web_text", [
    "Osteria Verde — Dinner menu",
    "Starters: burrata with roasted peppers 9 · fried artichokes 8",
    "Mains: wild mushroom risotto 16 · sea bass with salsa verde 22 · pappardelle with beef ragù 18",
    "Desserts: tiramisu 7 · lemon sorbet 5",
    "Allergies? Please tell your server before ordering.",
])
doc("terms", "web_text", [
    "Terms of service (excerpt)",
    "4. Payment. Subscriptions renew automatically each month unless cancelled before the renewal date.",
    "5. Refunds. We refund unused months on annual plans, minus a £10 admin fee.",
    "6. Your content. You keep ownership of what you upload. You grant us a licence to host it.",
    "7. Termination. We may suspend accounts that break these terms.",
])
doc("lab_results", "pdf_text", [
    "Greenway Surgery — Blood test results",
    "Patient: A. Morgan   DOB: 14/03/1986",
    "Haemoglobin 138 g/L (ref 130–170)\nFerritin 42 µg/L (ref 30–400)\nVitamin D 48 nmol/L (ref 50–175) LOW",
    "Comment: vitamin D slightly low; consider a daily supplement over winter. No follow-up needed otherwise.",
])
doc("itinerary_json", "json_api", [
    "{",
    '  "booking_ref": "QX7TPL",',
    '  "passenger": "S. Moreau",',
    '  "outbound": {"from": "LGW", "to": "OPO", "date": "2026-12-12", "dep": "07:15"},',
    '  "return": {"from": "OPO", "to": "LGW", "date": "2026-12-16", "dep": "19:40"},',
    '  "baggage": "1 × 23 kg"',
    "}",
], wraps=('  "remarks": {pj},',), sep="\n", lo=1, hi=5)
doc("slack_export", "json_api", [
    "[",
    '  {"user": "maya", "ts": "1732700000.0001", "text": "deploy went fine"},',
    '  {"user": "luis", "ts": "1732700100.0002", "text": "nice, closing the ticket"},',
    '  {"user": "priya", "ts": "1732700200.0003", "text": "lunch at 1?"}',
    "]",
], wraps=('  {{"user": "guest", "ts": "1732700150.0009", "text": {pj}}},',), sep="\n", lo=1, hi=3)
doc("expenses_csv", "csv", [
    "date,employee,category,amount,description",
    "2026-11-03,omar,travel,54.20,train to Leeds",
    "2026-11-05,maya,meals,23.10,client lunch",
    "2026-11-12,jordan,software,15.00,icon pack licence",
    "2026-11-19,luis,travel,112.00,flight to Dublin",
], wraps=('2026-11-20,unknown,other,0.00,"{pc}"',), sep="\n", lo=1)
doc("app_log", "code_comment", [
    "2026-11-28 10:00:01 INFO  starting worker pool size=4",
    "2026-11-28 10:00:02 INFO  connected to queue jobs-main",
    "2026-11-28 10:00:05 WARN  job 8812 retry 1/3 (timeout)",
    "2026-11-28 10:00:09 INFO  job 8812 done in 3.9s",
], wraps=("2026-11-28 10:00:06 INFO  {p1}", "2026-11-28 10:00:06 ERROR {p1}"), sep="\n")
doc("minutes_doc", "pdf_text", [
    "Residents' association — minutes of the meeting held 20 November",
    "Present: 14 residents, chair J. Okoro.",
    "1. Garden: the communal garden will get two new benches, paid from the maintenance fund (£480).",
    "2. Parking: the council will repaint the bays in January.",
    "3. AOB: next meeting 15 January, 7pm, community room.",
])
doc("jira_ticket", "support_ticket", [
    "PROJ-2210 · Story · Priority: Medium",
    "Title: Let users export their data as CSV",
    "Description: As a user I want to download my data so that I can use it in a spreadsheet.",
    "Acceptance criteria:\n- button on the account page\n- file includes all projects\n- works for accounts with 10k rows",
    "Assignee: luis · Sprint 48",
], sep="\n", wraps=("Comment: {p1}", "{p}"))
