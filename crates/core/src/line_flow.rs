//! AT-8: how a line's flow names where the line was filed — by the jobs' and tickets' names as
//! they are now: "Filed under: Promo › Cut" for a ticket, "Filed under: Promo, Poster" for two
//! jobs, a ticket named like its job said once, and "Filed under 2 jobs" when a name cannot be
//! found (a job or ticket gone since).

/// One place a line was filed under, with the names as they are now (`None`: not found).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filed<'a> {
    pub job_id: i64,
    pub job: Option<&'a str>,
    pub ticket: Ticket<'a>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ticket<'a> {
    /// Filed under the job as a whole.
    None,
    Named(&'a str),
    /// Filed under a ticket whose name cannot be found.
    Unknown,
}

/// The flow's words for where the line was filed; `None` for a line filed nowhere.
pub fn filed_under(targets: &[Filed<'_>]) -> Option<String> {
    if targets.is_empty() {
        return None;
    }
    let resolved = targets
        .iter()
        .all(|t| t.job.is_some() && t.ticket != Ticket::Unknown);
    if !resolved {
        let mut jobs: Vec<i64> = targets.iter().map(|t| t.job_id).collect();
        jobs.sort_unstable();
        jobs.dedup();
        let n = jobs.len();
        return Some(format!(
            "Filed under {n} {}",
            if n == 1 { "job" } else { "jobs" }
        ));
    }
    let mut names: Vec<String> = Vec::new();
    for t in targets {
        let job = t.job.unwrap_or_default().trim();
        let name = match t.ticket {
            Ticket::Named(ticket) if !same_name(ticket, job) => {
                format!("{job} \u{203a} {}", ticket.trim())
            }
            _ => job.to_string(),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Some(format!("Filed under: {}", names.join(", ")))
}

fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: i64, name: &str) -> Filed<'_> {
        Filed {
            job_id: id,
            job: Some(name),
            ticket: Ticket::None,
        }
    }

    #[test]
    fn at_8_a_ticket_reads_job_then_ticket() {
        let cut = Filed {
            ticket: Ticket::Named("Cut"),
            ..job(1, "Promo")
        };
        assert_eq!(
            filed_under(&[cut]).unwrap(),
            "Filed under: Promo \u{203a} Cut"
        );
    }

    #[test]
    fn at_8_several_jobs_are_listed_and_a_ticket_named_like_its_job_said_once() {
        assert_eq!(
            filed_under(&[job(1, "Promo"), job(2, "Poster")]).unwrap(),
            "Filed under: Promo, Poster"
        );
        let same = Filed {
            ticket: Ticket::Named("promo "),
            ..job(1, "Promo")
        };
        assert_eq!(
            filed_under(&[same, job(1, "Promo")]).unwrap(),
            "Filed under: Promo"
        );
    }

    #[test]
    fn at_8_names_that_cannot_be_found_are_counted() {
        let gone = Filed {
            job_id: 2,
            job: None,
            ticket: Ticket::None,
        };
        assert_eq!(
            filed_under(&[job(1, "Promo"), gone]).unwrap(),
            "Filed under 2 jobs"
        );
        let lost_ticket = Filed {
            ticket: Ticket::Unknown,
            ..job(1, "Promo")
        };
        assert_eq!(
            filed_under(&[lost_ticket, job(1, "Promo")]).unwrap(),
            "Filed under 1 job"
        );
        assert_eq!(filed_under(&[]), None);
    }
}
