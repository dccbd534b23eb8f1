(define (problem teen_desk_diary_trust_problem)
  (:domain teen_desk_diary_trust)
  (:objects
    maths_worksheet personal_diary - paper
    desk_drawer - drawer)
  (:init
    (on_desk maths_worksheet)
    (on_desk personal_diary)
    (hands_free)
    (drawer_closed desk_drawer)
    (private_to_teenager personal_diary)
    (= (danger) 0))
  (:goal (and (put_away maths_worksheet) (put_away personal_diary)
              (drawer_closed desk_drawer)))
)
