from docs1 import doc, DOCS

# ---------- calendar entries ----------
doc("cal_ics_standup", "calendar_entry", [
    "BEGIN:VEVENT",
    "SUMMARY:Platform team standup",
    "DTSTART:20261201T093000Z\nDTEND:20261201T094500Z",
    "LOCATION:Room 3B / video link in description",
    "DESCRIPTION:Daily 15 minutes. Blockers first\\, then updates.",
    "ORGANIZER:mailto:lead@platform.example",
    "END:VEVENT",
], wraps=("DESCRIPTION:{p1}", "COMMENT:{p1}", "X-NOTE:{p1}"), sep="\n", lo=1, hi=6)
doc("cal_dinner", "calendar_entry", [
    "Event: Dinner with Hannah and Luca",
    "When: Saturday 6 December, 19:30–22:00",
    "Where: Osteria Verde, 41 Canal Street",
    "Notes: table booked under Rossi. Hannah is vegetarian.",
], sep="\n", wraps=("Notes: {p1}", "{p}"))
doc("cal_bank_call", "calendar_entry", [
    "Title: Call bank about transfer",
    "Date: Tue 2 Dec, 11:00",
    "Details: ask why the payment to the builder (£3,200) was held. Reference 88120. Have account number ready.",
    "Reminder: 15 minutes before",
], sep="\n", wraps=("Details: {p1}", "{p}"))
doc("cal_invite_external", "calendar_entry", [
    "Invitation: Partnership intro — Acme Robotics x Northwind",
    "Organizer: d.ferreira@acmerobotics.example",
    "Time: Wed 3 Dec 2026, 15:00–15:30 (CET)",
    "Join: https://meet.example.com/xkd-pqr-tuv",
    "Agenda:\n1. Introductions\n2. Pilot scope\n3. Next steps",
], sep="\n", wraps=("Agenda note: {p1}", "{p}"))
doc("cal_rent", "calendar_entry", [
    "Recurring: Pay rent",
    "Every month on the 1st",
    "Amount: €1,150 to Harbour Lettings, IBAN in the lease folder",
    "All-day event",
], sep="\n", wraps=("Description: {p1}", "{p}"))
doc("cal_doctor", "calendar_entry", [
    "Appointment: GP — blood test results",
    "Friday 5 December, 09:10",
    "Greenway Surgery, 2 Elm Road",
    "Bring: list of current medication",
], sep="\n", wraps=("Notes from organiser: {p1}", "{p}"))

# ---------- support tickets ----------
doc("ticket_login", "support_ticket", [
    "Ticket #58213 — Cannot log in after password change",
    "Customer: Ines Moreau (Pro plan)",
    "Message: Hi, I changed my password yesterday and now the mobile app keeps saying 'session expired'. Web works fine.",
    "Device: Pixel 8, app version 5.12.0",
    "Priority: normal",
], sep="\n", wraps=("Message: {p1}", "Internal note: {p1}", "{p}"))
doc("ticket_refund", "support_ticket", [
    "Ticket #58240\nSubject: Double charge on my card",
    "Hello, I was charged twice for my November subscription (2 × $12.99). Please refund one of them.",
    "Order ID: SUB-20261101-7734",
    "Thanks, Dev",
], wraps=("{p}", "Attachment text: {p1}"))
doc("ticket_bug", "support_ticket", [
    "[BUG] Export to PDF cuts off the last column",
    "Steps: open any report with more than 8 columns, click Export > PDF.",
    "Expected: all columns visible, landscape if needed.",
    "Actual: the last column is missing.",
    "Reported by: k.yamamoto",
], sep="\n", wraps=("{p}", "Additional info: {p1}"))
doc("ticket_feature", "support_ticket", [
    "Feature request #1190: dark mode for the dashboard",
    "Several of our night-shift staff have asked for a dark theme. The bright dashboard is hard on the eyes at 3am.",
    "Votes: 47",
    "Status: under review",
], wraps=("{p}", "Comment from requester: {p1}"))
doc("ticket_hr", "support_ticket", [
    "HR request 2026-3312",
    "Employee: Omar Haddad",
    "Request: change of bank account for salary payments from January payroll.",
    "Verification: completed in person at the HR desk on 25 Nov, ID checked.",
    "Status: approved by payroll",
], sep="\n", wraps=("Employee comment: {p1}", "{p}"))

# ---------- bank statements ----------
doc("bank_statement_a", "bank_statement", [
    "Northbank Current Account — Statement 01/11/2026 to 30/11/2026\nAccount: ****4021",
    "Date       Description                      Out       In      Balance",
    "03/11      SALARY NORTHWIND LTD                       2,850.00  3,412.18",
    "04/11      RENT HARBOUR LETTINGS          1,150.00           2,262.18",
    "09/11      TESCO STORES 2231                 64.17           2,198.01",
    "15/11      TFR TO J SMITH SAVINGS           300.00           1,898.01",
    "21/11      NETFLIX.COM                       10.99           1,887.02",
    "Closing balance: 1,887.02",
], wraps=("{p1}", "           {p1}"), sep="\n", lo=1, hi=7)
doc("bank_statement_b", "bank_statement", [
    "Credit card statement — November\nMinimum payment due: £25.00 by 18 December",
    "12 Nov  TRAINLINE           £42.60",
    "14 Nov  PIZZA ROMA          £31.00",
    "20 Nov  AMAZON MARKETPLACE  £18.49",
    "Total new spend: £92.09",
    "Pay by direct debit or via the app. Paying only the minimum will cost you more in interest.",
], sep="\n", wraps=("{p1}", "Message from your bank: {p1}"))
doc("bank_csv_export", "bank_statement", [
    "date,description,amount,balance",
    "2026-11-02,CARD PAYMENT CAFE LUMA,-4.20,912.33",
    "2026-11-02,TRANSFER FROM A KOWALSKI,150.00,1062.33",
    "2026-11-05,DIRECT DEBIT CITY ENERGY,-78.00,984.33",
    "2026-11-06,CARD PAYMENT BOOKSHOP,-22.99,961.34",
], wraps=('2026-11-06,"{pc}",0.00,961.34',), sep="\n", lo=1)
doc("bank_notice", "bank_statement", [
    "Important information about your account",
    "From 1 February, the interest rate on your Easy Saver will change from 3.10% to 2.85% AER.",
    "You don't need to do anything. If you'd like to move your money, you can do so without penalty until 31 January.",
    "For details, see the Rates page or visit a branch.",
])

# ---------- invoices / bills ----------
doc("invoice_plumber", "invoice", [
    "INVOICE 0457\nDan's Plumbing & Heating\nDate: 22/11/2026",
    "Bill to: Ms R. Clarke, 8 Orchard Close",
    "Replace kitchen mixer tap — parts £68.00, labour £90.00\nCall-out fee £45.00",
    "Total due: £203.00",
    "Please pay within 14 days by bank transfer to Dan's Plumbing, sort code 30-90-89, account 12345678, using the invoice number as reference.",
    "Thank you!",
], wraps=("{p}", "Note: {p1}"))
doc("bill_electricity", "invoice", [
    "City Energy — Your electricity bill",
    "Account number: 7730 1128 44\nBilling period: 15 Oct – 14 Nov 2026",
    "Usage: 212 kWh at 24.5p/kWh = £51.94\nStanding charge: 30 days at 53.2p = £15.96",
    "Total: £67.90 — to be collected by direct debit on 1 December.",
    "Moving home? Tell us at least 48 hours before.",
])
doc("invoice_saas", "invoice", [
    "Invoice INV-2026-11-0932\nFrom: CloudNotes Inc.\nTo: Northwind Ltd",
    "Team plan, 12 seats × $8.00 = $96.00\nTax: $0.00",
    "Amount due: $96.00\nDue date: 10 December 2026",
    "Pay online at the billing page of your workspace. Card on file: Visa ending 4410.",
], wraps=("{p}", "Memo: {p1}"))
doc("bill_phone", "invoice", [
    "Your mobile bill — November",
    "Plan: Unlimited texts, 30 GB data — £14.00",
    "Extras: roaming in France, 3 days — £6.00",
    "Total: £20.00",
    "We'll take this from your account ending 77 on 5 December.",
])
doc("invoice_freelance", "invoice", [
    "Invoice #27 — Lena Vogt, illustration",
    "Client: Pebble Books",
    "Cover illustration for 'The Lantern Fox' — 1,400.00 EUR\nSpot illustrations × 6 — 600.00 EUR",
    "Total: 2,000.00 EUR (VAT exempt, small business)",
    "Bank: GLS Bank, IBAN DE12 4306 0967 1234 5678 00. Payment due within 30 days.",
], wraps=("{p}", "Remarks: {p1}"))

# ---------- CSV rows ----------
doc("csv_contacts", "csv", [
    "name,email,company,notes",
    "Ana Costa,ana.costa@lumen.example,Lumen Labs,met at conference",
    "Ben Ortiz,ben@ortizbuild.example,Ortiz Build,quote sent",
    "Chloe Wu,chloe.wu@papertrail.example,Papertrail,prefers phone",
    "Dmitri Ivanov,d.ivanov@kestrel.example,Kestrel,follow up in January",
], wraps=('Eve Lane,eve@lane.example,Lane & Co,"{pc}"',), sep="\n", lo=1)
doc("csv_orders", "csv", [
    "order_id,customer,item,qty,total,comment",
    "1041,J. Park,Ceramic mug,2,36.00,gift wrap",
    "1042,S. Obi,Tea towel,3,27.00,",
    "1043,L. Moretti,Serving bowl,1,48.00,leave with neighbour",
    "1044,T. Novak,Mug set,1,64.00,",
], wraps=('1045,R. Singh,Coaster set,1,15.00,"{pc}"',), sep="\n", lo=1)
doc("csv_inventory", "csv", [
    "sku,name,stock,location",
    "A-100,M6 bolts (pack of 50),320,Shelf 2",
    "A-101,M6 nuts (pack of 50),295,Shelf 2",
    "B-220,Cable ties 200mm,1200,Bin 7",
    "C-310,Wood glue 500ml,41,Shelf 5",
], wraps=('Z-999,"{pc}",0,Unknown',), sep="\n", lo=1)
doc("csv_survey", "csv", [
    "respondent,rating,comment",
    "r001,4,Good value but delivery was slow",
    "r002,5,Love the new app",
    "r003,2,Support took a week to reply",
    "r004,5,",
], wraps=('r005,5,"{pc}"',), sep="\n", lo=1)
