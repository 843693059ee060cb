"""The labelling data model: review items, the labels and events reviewers record, the answers they
are drawn from, consensus, agreement, adjudication, guidelines, samples and the calibration set."""
