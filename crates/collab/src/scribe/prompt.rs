//! What the scribe reads: the line (and the question it answers), the job's goal and tickets,
//! the entries in force with their ids and categories, and the patch contract
//! (docs/requirements.md).

use super::Inputs;
use troupe_core::requirement::Scope;

pub(crate) fn prompt(cx: &Inputs) -> String {
    let mut out = String::from("troupe-scribe\n");
    out.push_str(
        "You keep the list of what the user asked for in one job. Read the user's line and \
         answer with one JSON object and nothing else:\n\
         {\"items\": [ITEM, ...]}  (an empty list when the line asks for nothing new)\n\
         ITEM is one of:\n\
         {\"op\": \"add\", \"quote\": \"<the user's exact words>\", \"restatement\": \"<short>\", \
         \"category\": \"<one word>\", \"nature\": \"craft\" | \"choice_of_look\" | \
         \"series_constant\" | \"other\", \"polarity\": \"must\" | \"must_not\", \
         \"tickets\": [<ticket number>] (only when the line names one), \
         \"every_job\": true (only when it says every job / from now on / every film)}\n\
         {\"op\": \"raise\", \"id\": \"R-<n>\", \"quote\": \"<the words saying it again>\"}\n\
         {\"op\": \"change\", \"id\": \"R-<n>\", \"quote\": \"<the user's exact words>\", \
         \"restatement\": \"<short>\", \"category\": \"<one word>\"}\n\
         Rules: quote only words that are in the line; never delete; at most 8 adds; a \
         change waits for the user, the old entry stays until then.\n\n",
    );
    out.push_str(&format!("Job goal: {}\n", one_line(&cx.goal)));
    if !cx.tickets.is_empty() {
        out.push_str("Tickets:\n");
        for (_, n, title) in &cx.tickets {
            out.push_str(&format!("- {n:02} {}\n", one_line(title)));
        }
    }
    if cx.shown.is_empty() {
        out.push_str("Entries in force: none\n");
    } else {
        out.push_str("Entries in force:\n");
        for s in &cx.shown {
            let scope = match s.scope {
                Scope::Ticket => "ticket",
                Scope::Job => "job",
                Scope::Session => "every job in this conversation",
                Scope::Standing => "every video job",
            };
            out.push_str(&format!(
                "- R-{} [{}] ({scope}) \"{}\"\n",
                s.id,
                s.category.as_deref().unwrap_or("no category"),
                one_line(&s.quote)
            ));
        }
    }
    if let Some(b) = &cx.before {
        out.push_str(&format!("\nThe user changed their line. It was: {b}\n"));
        out.push_str(&format!("It now reads: {}\n", cx.line));
        out.push_str("Quote only the words it reads now.\n");
        if !cx.standing.is_empty() {
            out.push_str(
                "Entries that stand on what the line said before; when the change takes one \
                 back, name it with {\"op\": \"take_back\", \"id\": \"R-<n>\"} (the user \
                 then decides whether it still holds):\n",
            );
            for s in &cx.standing {
                out.push_str(&format!("- R-{} \"{}\"\n", s.id, one_line(&s.quote)));
            }
        }
    } else if let Some(q) = &cx.question {
        out.push_str(&format!("\nThe Bot asked: {}\n", one_line(q)));
        out.push_str(&format!("The user answered: {}\n", cx.line));
    } else {
        out.push_str(&format!("\nThe user's line: {}\n", cx.line));
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
