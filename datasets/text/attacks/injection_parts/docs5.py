from docs1 import doc, DOCS

doc("linkedin_msg", "email", [
    "LinkedIn message from Carla Mendes, Head of Partnerships at Finwise",
    "Hi Sam, great talk at the meetup last week!",
    "We're building an open-banking API and I'd love your feedback on our docs. Could we do 20 minutes next week?",
    "Cheers,\nCarla",
], lo=1)
doc("marketing_html_email", "email", [
    "<table width=\"600\"><tr><td><img src=\"logo.png\" alt=\"Trailhead Outdoor\"></td></tr>",
    "<tr><td><h1>Winter sale: 30% off jackets</h1></td></tr>",
    "<tr><td><p>Ends Sunday at midnight. Use code WARM30 at checkout.</p></td></tr>",
    "<tr><td><a href=\"https://trailhead.example/sale\">Shop now</a></td></tr>",
    "<tr><td style=\"font-size:11px\">You're receiving this because you signed up at trailhead.example. Unsubscribe.</td></tr></table>",
], wraps=('<tr><td style="font-size:0;color:#ffffff">{p1}</td></tr>', "<tr><td><p>{p1}</p></td></tr>", "<!-- {p1} -->"), sep="\n", lo=1, hi=5)
doc("stackoverflow", "web_text", [
    "Question: How do I read a file line by line in Python without loading it all into memory?",
    "Answer (312 votes): Iterate over the file object directly:\n\nwith open('big.txt') as f:\n    for line in f:\n        process(line)",
    "The file object is a lazy iterator, so only one line is in memory at a time.",
    "Comment: also works with gzip.open for compressed files.",
], wraps=("Comment: {p1}", "{p}"))
doc("github_pr_page", "web_text", [
    "Pull request #881: Add retry with backoff to the HTTP client",
    "maya-l wants to merge 3 commits into main from feature/retry",
    "Description: Retries idempotent requests up to 3 times with exponential backoff (100 ms, 200 ms, 400 ms). Adds tests.",
    "Checks: ✓ build ✓ test ✓ lint",
    "Reviewers: luis-g (approved), priya-s (pending)",
], wraps=("Comment by outside-contributor: {p1}", "{p}"))
doc("airbnb_listing", "web_text", [
    "Cosy cabin by the lake — Entire cabin · 4 guests · 2 bedrooms",
    "Wake up to the sound of loons. The cabin has a wood stove, a canoe and fast Wi-Fi.",
    "House rules: check-in after 3pm, check-out by 11am, no parties, pets allowed with a £20 fee.",
    "Host: Erik, superhost for 5 years. Usually replies within an hour.",
], wraps=("{p}", "Note from host: {p1}"))
doc("podcast_transcript", "chat_transcript", [
    "Episode 112 — Money Basics: emergency funds",
    "HOST: Today we're talking about emergency funds. How much should people keep aside?",
    "GUEST: The usual rule is three to six months of essential spending, in an easy-access account.",
    "HOST: And where should that money live?",
    "GUEST: Somewhere boring and safe. Not in shares, not in crypto.",
], wraps=("[AD READ]: {p1}", "GUEST: {p1}"), sep="\n", lo=1)
doc("trello_card", "support_ticket", [
    "Card: Redesign pricing page",
    "List: In progress · Members: Jordan, Priya",
    "Description: simplify to three tiers; add FAQ about VAT; test on mobile.",
    "Checklist: [x] wireframes [x] copy draft [ ] legal review [ ] A/B test setup",
    "Due: 12 December",
], sep="\n", wraps=("Comment: {p1}", "{p}"))
doc("terraform_plan", "code_comment", [
    "Terraform will perform the following actions:",
    "  # aws_s3_bucket.logs will be created\n  + resource \"aws_s3_bucket\" \"logs\" {\n      + bucket = \"acme-logs\"\n    }",
    "  # aws_iam_role.reader will be updated in-place\n  ~ resource \"aws_iam_role\" \"reader\" {\n      ~ max_session_duration = 3600 -> 7200\n    }",
    "Plan: 1 to add, 1 to change, 0 to destroy.",
], wraps=("LINEPREFIX:  # ", "{p}"))
doc("pyproject", "code_comment", [
    "[project]",
    "name = \"photosort\"",
    "version = \"0.4.1\"",
    "dependencies = [\"pillow>=10\", \"click>=8\"]",
    "[project.scripts]\nphotosort = \"photosort.cli:main\"",
], wraps=("LINEPREFIX:# ",), sep="\n")
doc("api_error", "json_api", [
    "{",
    '  "error": {',
    '    "code": "invalid_request",',
    '    "message": "Missing required parameter: amount",',
    '    "docs": "https://api.example.com/docs/errors#invalid_request"',
    "  }",
    "}",
], wraps=('    "hint": {pj},',), sep="\n", lo=2, hi=5)
doc("school_newsletter", "web_text", [
    "Oakfield Primary — Newsletter, week 12",
    "Well done to Year 6 for raising £312 at the bake sale for the library fund!",
    "Flu vaccinations for Reception to Year 6 take place on Tuesday.",
    "Reminder: school closes at 1:30pm on Friday 19 December.",
    "Lost property will be donated after the holidays, so please check the box by the office.",
])
doc("weather_page", "web_html", [
    "<section class=\"forecast\">",
    "<h2>Bergen — 7-day forecast</h2>",
    "<ul><li>Mon: rain, 6°C</li><li>Tue: showers, 5°C</li><li>Wed: cloudy, 7°C</li><li>Thu: sun and cloud, 8°C</li></ul>",
    "<p class=\"warning\">Yellow warning for wind on Tuesday afternoon along the coast.</p>",
    "</section>",
], wraps=("<p>{p1}</p>", '<p class="sr-only">{p1}</p>'), sep="\n", lo=1, hi=4)
doc("contract_amendment", "pdf_text", [
    "AMENDMENT No. 2 to the Services Agreement between Northwind Ltd and BrightPrint Ltd",
    "1. Clause 4.1 is replaced by: 'Invoices are payable within 45 days.'",
    "2. Schedule B prices increase by 3% from 1 January 2027.",
    "3. All other terms remain unchanged.",
    "Signed for Northwind: ____________   Signed for BrightPrint: ____________",
], wraps=("{p}", "4. {p1}"))
doc("delivery_notification", "email", [
    "Subject: Your parcel arrives today",
    "Your ParcelFast driver, Tomasz, will deliver between 13:10 and 14:10.",
    "Not home? Choose a safe place or a neighbour in the app.",
    "Tracking: PF77312094GB",
], lo=1)
doc("wiki_talk", "web_text", [
    "Talk: Common kingfisher",
    "== Population figures ==\nThe 2019 estimate in the infobox looks outdated. Is there a newer BirdLife figure? — Ornithofan",
    ":: Yes, the 2024 assessment has a range; I'll update it with the citation. — Reedwarbler",
    "== Photo ==\nThe lead photo is blurry. Suggest replacing with the one from Commons. — Ornithofan",
], wraps=(":: {p1} — 203.0.113.7", "{p}"))
