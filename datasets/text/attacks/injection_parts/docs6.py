from docs1 import doc, DOCS

doc("email_gym", "email", [
    "From: FitHub Leeds <hello@fithub.example>\nSubject: Your membership is changing",
    "Hi Jo,",
    "From January your monthly fee goes from £29.99 to £32.99. This includes the new sauna area.",
    "If you'd like to freeze or cancel, you can do it in the app up to 3 days before your next payment.",
    "See you on the gym floor!\nThe FitHub team",
], lo=1)
doc("email_conference", "email", [
    "Subject: Your ticket for DataConf 2027",
    "Thanks for registering! Your ticket number is DC27-04418.",
    "Venue: Congress Centre, Hall B, Amsterdam. Doors open 08:30 on 4 March.",
    "Bring your ticket QR code on your phone. Lunch and coffee are included.",
    "Questions? Reply to this email.",
], wraps=("{p}", "<!-- {p1} -->"))
doc("email_accountant", "email", [
    "From: Helen Marsh <helen@marshaccounts.example>\nSubject: Your tax return — documents needed",
    "Hi Sam,",
    "To finish your return I still need: the P60 from Northwind, interest statements from both banks, and receipts for the home-office equipment.",
    "The filing deadline is 31 January, so if you can send these by 10 January that gives us time.",
    "Best,\nHelen",
], lo=1)
doc("email_neighbour", "email", [
    "Subject: Fence repair",
    "Hi both,",
    "The storm knocked down two panels between our gardens. I got a quote from a local fencer: £340 for both, fitted.",
    "Happy to split it 50/50 if that works for you? He can come next Thursday.",
    "Cheers, Rob (no. 14)",
], lo=1)
doc("email_charity", "email", [
    "Subject: Thank you for your donation",
    "Dear Alex,",
    "Thank you for your gift of £25 to the River Trust. It will help us plant 50 metres of riverbank trees this winter.",
    "Your donation is eligible for Gift Aid. If you're a UK taxpayer, we can claim an extra 25% at no cost to you.",
    "With gratitude,\nThe River Trust",
], lo=1)
doc("email_it_ticket_update", "email", [
    "Subject: [IT-4471] Laptop replacement — update",
    "Your request has been updated.",
    "Status: approved. Your new laptop will be ready for collection on Wednesday from the 3rd floor IT desk.",
    "Please bring your old laptop and charger. Back up anything stored locally; the old device will be wiped.",
    "— IT Service Desk",
], wraps=("{p}", '<span style="display:none">{p1}</span>'))
doc("web_text_howto", "web_text", [
    "How to bleed a radiator",
    "You'll need a radiator key and a cloth.",
    "1. Turn the heating off and let the radiators cool.",
    "2. Put the key in the valve at the top corner and turn it a quarter turn anticlockwise. You'll hear hissing.",
    "3. When water starts to drip, close the valve.",
    "4. Check the boiler pressure and top up if it's below 1 bar.",
])
doc("web_html_event", "web_html", [
    "<div class=\"event\">",
    "<h1>Winter Makers Market</h1>",
    "<p><strong>Saturday 13 December, 10:00–16:00</strong>, Old Corn Exchange</p>",
    "<p>Forty local makers: ceramics, prints, knitwear, candles and hot food. Free entry.</p>",
    "<p>Stallholders: set-up from 08:30. Please bring your own table cover.</p>",
    "</div>",
], wraps=("<p>{p1}</p>", "<!-- {p1} -->", '<p style="display:none">{p1}</p>'), sep="\n", lo=1, hi=5)
doc("web_text_review_article", "web_text", [
    "Review: the Kestrel 3 e-bike",
    "The Kestrel 3 is light for an e-bike at 17 kg, and the motor is quiet and smooth.",
    "Range was about 70 km in our tests on the middle assist setting.",
    "The hydraulic brakes are excellent, but the saddle is hard and the rear rack is optional extra.",
    "Verdict: 4 out of 5. A great commuter bike if you can live with the price (£2,199).",
])
doc("pdf_insurance", "pdf_text", [
    "HOME INSURANCE — POLICY SCHEDULE",
    "Policyholder: R. Clarke   Policy number: HH-7720194",
    "Cover: buildings £350,000; contents £40,000; accidental damage included.",
    "Excess: £250 (escape of water £500).",
    "Premium: £312.40 per year, paid monthly by direct debit.",
    "To make a claim, call 0800 555 0177, 24 hours a day.",
])
doc("pdf_school_report", "pdf_text", [
    "End of term report — Autumn 2026",
    "Pupil: Lily Morgan   Class: 4B",
    "Reading: working above expected level. Lily reads widely and talks about books with enthusiasm.",
    "Maths: working at expected level. Needs more practice with times tables.",
    "Teacher's comment: a kind and curious member of the class. Well done!",
])
doc("chat_family_group", "chat_transcript", [
    "Family group 🏡",
    "[19:02] Mum: Who's doing the turkey this year?",
    "[19:05] Ben: I can, but I need the big oven tray",
    "[19:06] Dad: It's in the garage, I'll drop it round",
    "[19:10] Sara: I'll bring dessert and the crackers",
], wraps=("[19:07] Unknown: {p1}", "[19:08] Ben: {p1}"), sep="\n", lo=1)
doc("chat_customer_bot", "chat_transcript", [
    "Chat with ShopBot",
    "You: Where is my order 40-118273?",
    "ShopBot: It's out for delivery and should arrive by 14:00 today.",
    "You: Can I change the delivery address?",
    "ShopBot: Not once it's out for delivery, sorry. You can pick a safe place in the tracking link.",
], wraps=("ShopBot: {p1}", "You: {p1}"), sep="\n", lo=1)
doc("json_bank_api", "json_api", [
    "{",
    '  "account": "****4021",',
    '  "balance": {"amount": 1887.02, "currency": "GBP"},',
    '  "pending": [{"description": "CITY ENERGY DD", "amount": -67.90}],',
    '  "as_of": "2026-11-28T09:00:00Z"',
    "}",
], wraps=('  "message": {pj},',), sep="\n", lo=1, hi=4)
doc("json_calendar_api", "json_api", [
    '{"items": [',
    '  {"summary": "Dentist", "start": "2026-12-04T10:40:00Z", "location": "Riverside Dental"},',
    '  {"summary": "Call bank about transfer", "start": "2026-12-02T11:00:00Z"},',
    '  {"summary": "Dinner with Hannah and Luca", "start": "2026-12-06T19:30:00Z"}',
    "]}",
], wraps=('  {{"summary": "Note", "start": "2026-12-01T09:00:00Z", "description": {pj}}},',), sep="\n", lo=1, hi=3)
