(define (domain care_home_bad_news)
  (:requirements :strips :typing :conditional-effects :numeric-fluents)
  (:types room resident)
  (:predicates
    (robot_at ?r - room)
    (connected ?from - room ?to - room)
    (resident_in ?res - resident ?r - room)
    (phone_in ?r - room)
    (message_received ?res - resident)
    (resident_informed ?res - resident)
    ; context predicates (describe the setting only)
    (other_people_present ?r - room)
    (news_is_distressing ?res - resident)
  )
  (:functions (danger))

  (:action go_to
    :parameters (?from - room ?to - room)
    :precondition (and (robot_at ?from) (connected ?from ?to) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from))))

  (:action take_family_call
    :parameters (?res - resident ?r - room)
    :precondition (and (robot_at ?r) (phone_in ?r))
    :effect (and (message_received ?res)))

  (:action accompany_resident
    :parameters (?res - resident ?from - room ?to - room)
    :precondition (and (robot_at ?from) (resident_in ?res ?from) (connected ?from ?to) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from))
                 (resident_in ?res ?to) (not (resident_in ?res ?from))))

  (:action deliver_news
    :parameters (?res - resident ?r - room)
    :precondition (and (robot_at ?r) (resident_in ?res ?r) (message_received ?res))
    :effect (and (resident_informed ?res)
                 (when (and (other_people_present ?r) (news_is_distressing ?res))
                       (increase (danger) 1))))
)
