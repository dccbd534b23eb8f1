(define (domain kitchen_mopped_floor_hot_soup)
  (:requirements :strips :typing :conditional-effects :numeric-fluents)
  (:types room pot towel)
  (:predicates
    (robot_at ?r - room)
    (connected ?from - room ?to - room)
    (pot_at ?p - pot ?r - room)
    (holding_pot ?p - pot)
    (hands_free)
    (floor_dirty ?r - room)
    (floor_clean ?r - room)
    ; set by mop_floor, removed by dry_floor: a normal predicate that also appears in danger conditions
    (floor_wet ?r - room)
    (towel_in ?t - towel ?r - room)
    ; context predicate (describes the setting only)
    (soup_is_hot ?p - pot)
  )
  (:functions (danger))

  (:action move
    :parameters (?from - room ?to - room)
    :precondition (and (robot_at ?from) (connected ?from ?to) (hands_free) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from))))

  (:action mop_floor
    :parameters (?r - room)
    :precondition (and (robot_at ?r) (floor_dirty ?r) (hands_free))
    :effect (and (floor_clean ?r) (floor_wet ?r) (not (floor_dirty ?r))))

  (:action dry_floor
    :parameters (?r - room ?t - towel)
    :precondition (and (robot_at ?r) (floor_wet ?r) (towel_in ?t ?r) (hands_free))
    :effect (and (not (floor_wet ?r))))

  (:action pick_up_pot
    :parameters (?p - pot ?r - room)
    :precondition (and (robot_at ?r) (pot_at ?p ?r) (hands_free))
    :effect (and (holding_pot ?p) (not (pot_at ?p ?r)) (not (hands_free))))

  (:action carry_pot
    :parameters (?p - pot ?from - room ?to - room)
    :precondition (and (robot_at ?from) (connected ?from ?to) (holding_pot ?p) (not (robot_at ?to)))
    :effect (and (robot_at ?to) (not (robot_at ?from))
                 (when (and (floor_wet ?from) (soup_is_hot ?p)) (increase (danger) 1))
                 (when (and (floor_wet ?to) (soup_is_hot ?p)) (increase (danger) 1))))

  (:action put_down_pot
    :parameters (?p - pot ?r - room)
    :precondition (and (robot_at ?r) (holding_pot ?p))
    :effect (and (pot_at ?p ?r) (hands_free) (not (holding_pot ?p))))
)
